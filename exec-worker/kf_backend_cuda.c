/*  kf_backend_cuda.c - the CUDA evaluation harness and device probe.
 *
 *  Runs inside the sandboxed evaluation child, like the host harness, and
 *  judges by the same rules (kf_eval_elem.h, kf_eval_judge_output), but
 *  on the device (kf_cuda_judge): inputs are drawn there (or exported
 *  PyTorch data copied up once a set) into a staging buffer that each
 *  side's inputs are copied from on the device, and compared with it
 *  after every candidate call to prove they did not change; outputs are
 *  poisoned before every call (from a poison image kept on the device)
 *  and compared with the reference's on the device. Only figures cross
 *  the bus. The device is synchronised after the staging copies, so a
 *  kernel on a stream of the candidate's own cannot start before them.
 *  GPU memory has no guard pages, so every device buffer sits between two
 *  canary regions that are read back after each call; a write far outside
 *  faults on the device ("illegal memory access"), which the runtime
 *  reports at the next synchronisation and we turn into "crashed".
 *
 *  Timing: each sample is CALLS back-to-back calls between two CUDA
 *  events; the end event is recorded only after cudaDeviceSynchronize, so
 *  a kernel the candidate put on a stream of its own is inside the
 *  interval. The fixed cost of that synchronisation and of the event
 *  records is measured with empty samples and subtracted. L2 is flushed
 *  before every sample by a memset of twice its size, and reference and
 *  candidate samples alternate, so the speedup is a paired ratio. The
 *  correctness pass's calls of the main shape count towards the warm-up
 *  floor (kf_eval_warm_t): the warm-up then only tops up what is missing.
 *
 *  CUDA is reached only through kf_cuda_api (dlopen), so this file builds
 *  and links without a toolkit.
 */
#include "kf_backend.h"
#include "kf_cuda_api.h"
#include "kf_cuda_judge.h"
#include "kf_eval_check.h"
#include "kf_kernel.h"
#include "kf_refdata.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_TENSORS 32
#define S_MAX_SCRATCH 64
#define S_PAD 256                       // canary bytes around device buffers
#define S_COPY_BYTES ((size_t) 256 << 20)
#define S_MAX_SAMPLES 10000

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                            const kf_ctx_t *);

static kf_cuda_api_t *s_api;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *
s_err (int rc)
{
    static char buf[256];
    return kf_cuda_api_error (s_api, rc, buf, sizeof buf);
}

//  Waits for all work on the device and collects any error, sticky
//  (illegal address, launch failure) or not (a bad launch configuration).
static int
s_settle (void)
{
    int rc = s_api->DeviceSynchronize ();
    int last = s_api->GetLastError ();
    return rc ? rc : last;
}

// --------------------------------------------------------------------------
//  Device memory bandwidth: a device-to-device copy of 256 MiB, ten times,
//  between events. Counted as bytes read plus bytes written, which is how
//  the achieved bandwidth of a candidate is counted too.

static int
s_copy_bandwidth (double *gbs, char *why, size_t why_size)
{
    void *a = NULL, *b = NULL, *e0 = NULL, *e1 = NULL;
    const int reps = 10;
    float ms = 0;
    int rc = s_api->Malloc (&a, S_COPY_BYTES);
    if (!rc) rc = s_api->Malloc (&b, S_COPY_BYTES);
    if (!rc) rc = s_api->Memset (a, 1, S_COPY_BYTES);
    if (!rc) rc = s_api->EventCreate (&e0);
    if (!rc) rc = s_api->EventCreate (&e1);
    if (!rc) rc = s_api->Memcpy (b, a, S_COPY_BYTES, KF_CUDA_D2D);
    if (!rc) rc = s_api->DeviceSynchronize ();
    if (!rc) rc = s_api->EventRecord (e0, NULL);
    for (int k = 0; k < reps && !rc; k++)
        rc = s_api->Memcpy (b, a, S_COPY_BYTES, KF_CUDA_D2D);
    if (!rc) rc = s_api->EventRecord (e1, NULL);
    if (!rc) rc = s_api->EventSynchronize (e1);
    if (!rc) rc = s_api->EventElapsedTime (&ms, e0, e1);
    if (rc)
        snprintf (why, why_size, "copy bandwidth: %s", s_err (rc));
    else
        *gbs = ms > 0 ? 2.0 * (double) S_COPY_BYTES * reps / (ms * 1e-3) / 1e9 : 0;
    if (e0) s_api->EventDestroy (e0);
    if (e1) s_api->EventDestroy (e1);
    if (a) s_api->Free (a);
    if (b) s_api->Free (b);
    return rc ? -1 : 0;
}

// --------------------------------------------------------------------------
//  Compute ceiling: an f32 FMA kernel loaded from PTX text through the
//  driver API (no compiler needed at run time), eight independent chains
//  per thread so throughput, not latency, binds; four blocks of 256
//  threads per multiprocessor; the best of three launches. The result is
//  stored only if it equals a value it never takes, so nothing is
//  optimised away and no memory traffic is timed.

static const char s_fma_ptx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry kf_fma_peak (.param .u64 out, .param .u32 iters)\n{\n"
    "  .reg .f32 a<8>, m, c;\n  .reg .u32 i, n, t;\n  .reg .u64 ptr;\n  .reg .pred p;\n"
    "  ld.param.u64 ptr, [out];\n  ld.param.u32 n, [iters];\n"
    "  mov.u32 t, %tid.x;\n  cvt.rn.f32.u32 a0, t;\n"
    "  add.f32 a1, a0, 0f3F800000;\n  add.f32 a2, a0, 0f40000000;\n"
    "  add.f32 a3, a0, 0f40400000;\n  add.f32 a4, a0, 0f40800000;\n"
    "  add.f32 a5, a0, 0f40A00000;\n  add.f32 a6, a0, 0f40C00000;\n"
    "  add.f32 a7, a0, 0f40E00000;\n"
    "  mov.f32 m, 0f3F7FFFEF;\n  mov.f32 c, 0f33D6BF95;\n  mov.u32 i, 0;\n"
    "LOOP:\n"
    "  fma.rn.f32 a0, a0, m, c;\n  fma.rn.f32 a1, a1, m, c;\n"
    "  fma.rn.f32 a2, a2, m, c;\n  fma.rn.f32 a3, a3, m, c;\n"
    "  fma.rn.f32 a4, a4, m, c;\n  fma.rn.f32 a5, a5, m, c;\n"
    "  fma.rn.f32 a6, a6, m, c;\n  fma.rn.f32 a7, a7, m, c;\n"
    "  add.u32 i, i, 1;\n  setp.lt.u32 p, i, n;\n  @p bra LOOP;\n"
    "  add.f32 a0, a0, a1;\n  add.f32 a2, a2, a3;\n  add.f32 a4, a4, a5;\n"
    "  add.f32 a6, a6, a7;\n  add.f32 a0, a0, a2;\n  add.f32 a4, a4, a6;\n"
    "  add.f32 a0, a0, a4;\n  setp.eq.f32 p, a0, 0fC2F6E979;\n"
    "  @p st.global.f32 [ptr], a0;\n  ret;\n}\n";

//  *GFLOPS and *SOURCE ("fma-ptx"), or -1 with WHY when the driver API is
//  missing or the kernel does not load or run.
static int
s_fma_peak (int sms, double *gflops, const char **source, char *why, size_t why_size)
{
    *gflops = 0;
    *source = "none";
    if (!s_api->ModuleLoadData) {
        snprintf (why, why_size, "no driver API (libcuda.so.1) for the FMA kernel");
        return -1;
    }
    void *module = NULL, *fn = NULL, *out = NULL, *e0 = NULL, *e1 = NULL;
    int rc = s_api->ModuleLoadData (&module, s_fma_ptx);
    if (!rc) rc = s_api->ModuleGetFunction (&fn, module, "kf_fma_peak");
    if (!rc) rc = s_api->Malloc (&out, 256);
    if (!rc) rc = s_api->EventCreate (&e0);
    if (!rc) rc = s_api->EventCreate (&e1);
    unsigned iters = 8192, blocks = (unsigned) (sms > 0 ? sms : 1) * 4, threads = 256;
    double best_ms = 0;
    for (int r = 0; r < 4 && !rc; r++) {
        void *params[] = { &out, &iters };
        float ms = 0;
        rc = s_api->EventRecord (e0, NULL);
        if (!rc) rc = s_api->LaunchKernel (fn, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL);
        if (!rc) rc = s_api->EventRecord (e1, NULL);
        if (!rc) rc = s_api->EventSynchronize (e1);
        if (!rc) rc = s_api->EventElapsedTime (&ms, e0, e1);
        //  The first launch pays for loading the module: not counted.
        if (!rc && r > 0 && ms > 0 && (best_ms == 0 || ms < best_ms))
            best_ms = ms;
    }
    if (rc)
        snprintf (why, why_size, "FMA kernel: error %d", rc);
    else if (best_ms > 0) {
        double flops = 2.0 * 8 * (double) iters * (double) blocks * threads;
        *gflops = flops / (best_ms * 1e-3) / 1e9;
        *source = "fma-ptx";
    }
    if (e0) s_api->EventDestroy (e0);
    if (e1) s_api->EventDestroy (e1);
    if (out) s_api->Free (out);
    if (module) s_api->ModuleUnload (module);
    s_api->GetLastError ();
    return rc ? -1 : 0;
}

//  Name, compute capability, multiprocessors, memory and L2 of DEVICE.
typedef struct {
    char name[256];
    int cc_major, cc_minor, sms, l2_bytes;
    size_t memory_bytes;
} s_devinfo_t;

static int
s_devinfo (int device, s_devinfo_t *d, char *why, size_t why_size)
{
    memset (d, 0, sizeof *d);
    //  cudaDeviceProp changes size between releases, but its first field
    //  has always been char name[256]; a generous zeroed buffer takes any
    //  version's struct, and everything else comes from attributes.
    char *prop = calloc (1, 64 * 1024);
    if (!prop) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    int rc = s_api->GetDeviceProperties (prop, device);
    if (!rc) {
        memcpy (d->name, prop, sizeof d->name - 1);
        d->name[sizeof d->name - 1] = 0;
    }
    free (prop);
    if (!rc) rc = s_api->DeviceGetAttribute (&d->cc_major, KF_CUDA_ATTR_CC_MAJOR, device);
    if (!rc) rc = s_api->DeviceGetAttribute (&d->cc_minor, KF_CUDA_ATTR_CC_MINOR, device);
    if (!rc) rc = s_api->DeviceGetAttribute (&d->sms, KF_CUDA_ATTR_MULTIPROCESSORS, device);
    if (!rc) rc = s_api->DeviceGetAttribute (&d->l2_bytes, KF_CUDA_ATTR_L2_BYTES, device);
    size_t free_bytes = 0;
    if (!rc) rc = s_api->MemGetInfo (&free_bytes, &d->memory_bytes);
    if (rc) {
        snprintf (why, why_size, "device properties: %s", s_err (rc));
        return -1;
    }
    return 0;
}

static int
s_load_api (int device, char *why, size_t why_size)
{
    char reason[400];
    if (!s_api)
        s_api = kf_cuda_api_new (reason, sizeof reason);
    if (!s_api) {
        snprintf (why, why_size, "no CUDA device: %s", reason);
        return -1;
    }
    if (kf_cuda_api_open_device (s_api, device, reason, sizeof reason)) {
        snprintf (why, why_size, "no CUDA device: %s", reason);
        return -1;
    }
    return 0;
}

static json_t *
s_cuda_probe (int device, char *why, size_t why_size)
{
    if (s_load_api (device, why, why_size))
        return NULL;
    s_devinfo_t d;
    double gbs = 0;
    char reason[400];
    if (s_devinfo (device, &d, reason, sizeof reason)
        || s_copy_bandwidth (&gbs, reason, sizeof reason)) {
        snprintf (why, why_size, "no CUDA device: %s", reason);
        s_api->DeviceReset ();
        return NULL;
    }
    double peak = 0;
    const char *peak_source = "none";
    char peak_why[200];
    s_fma_peak (d.sms, &peak, &peak_source, peak_why, sizeof peak_why);
    int runtime = 0, driver = 0;
    s_api->RuntimeGetVersion (&runtime);
    s_api->DriverGetVersion (&driver);
    //  Give the context back: the worker parent only describes the GPU;
    //  every evaluation child makes its own.
    s_api->DeviceReset ();
    char arch[32], cc[16];
    snprintf (arch, sizeof arch, "sm_%d%d", d.cc_major, d.cc_minor);
    snprintf (cc, sizeof cc, "%d.%d", d.cc_major, d.cc_minor);
    json_t *dev = json_pack ("{s:i, s:s, s:s, s:i, s:I, s:i, s:f, s:i, s:i, s:s}",
                             "index", device, "name", d.name,
                             "compute_capability", cc, "multiprocessors", d.sms,
                             "memory_bytes", (json_int_t) d.memory_bytes,
                             "l2_bytes", d.l2_bytes,
                             "copy_bandwidth_gbs", round (gbs * 10) / 10,
                             "runtime_version", runtime, "driver_version", driver,
                             "runtime", s_api->path);
    json_object_set_new (dev, "peak_gflops", json_real (round (peak)));
    json_object_set_new (dev, "peak_source", json_string (peak_source));
    return json_pack ("{s:s, s:[o]}", "arch", arch, "devices", dev);
}

// --------------------------------------------------------------------------
//  Device buffers between canaries

typedef struct {
    char *base;              // the allocation
    size_t alloc;
    char *data;              // base + S_PAD, 256-byte aligned
    size_t bytes;
} s_dbuf_t;

static int
s_dbuf_new (s_dbuf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t body = (bytes + S_PAD - 1) / S_PAD * S_PAD;
    b->alloc = S_PAD + body + S_PAD;
    int rc = s_api->Malloc ((void **) &b->base, b->alloc);
    if (rc) {
        b->base = NULL;
        return rc;
    }
    b->data = b->base + S_PAD;
    b->bytes = bytes;
    return s_api->Memset (b->base, 0xA5, b->alloc);
}

//  0 when both canaries hold, 1 when the one before was written, 2 the
//  one after; or -1 when they could not be read (*RC set).
static int
s_dbuf_canaries (const s_dbuf_t *b, int *rc)
{
    unsigned char front[S_PAD], back[2 * S_PAD];
    size_t tail = b->alloc - S_PAD - b->bytes;
    *rc = s_api->Memcpy (front, b->base, S_PAD, KF_CUDA_D2H);
    if (!*rc)
        *rc = s_api->Memcpy (back, b->data + b->bytes, tail, KF_CUDA_D2H);
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

typedef struct {
    void *ptr[S_MAX_SCRATCH];
    size_t size[S_MAX_SCRATCH];
    int n, used;
} s_scratch_t;

static void *
s_scratch_alloc (void *state, size_t bytes)
{
    s_scratch_t *s = state;
    if (s->used >= S_MAX_SCRATCH)
        return NULL;
    int k = s->used;
    if (k < s->n && s->size[k] >= bytes) {
        s->used++;
        return s->ptr[k];
    }
    if (k < s->n && s->ptr[k]) {
        s_api->Free (s->ptr[k]);
        s->ptr[k] = NULL;
        s->size[k] = 0;
    }
    void *p = NULL;
    if (s_api->Malloc (&p, bytes ? bytes : 1)) {
        s_api->GetLastError ();
        return NULL;
    }
    s->ptr[k] = p;
    s->size[k] = bytes;
    if (k >= s->n)
        s->n = k + 1;
    s->used++;
    return p;
}

// --------------------------------------------------------------------------
//  The evaluation

typedef struct {
    s_forward_fn *ref_fn, *cand_fn;
    int n_in, n_out;
    kf_eval_spec_t in[S_MAX_TENSORS], out[S_MAX_TENSORS];
    s_dbuf_t in_d[S_MAX_TENSORS], ref_d[S_MAX_TENSORS], cand_d[S_MAX_TENSORS];
    void *src_d[S_MAX_TENSORS];      // this set's inputs, uploaded once
    void *poison_d[S_MAX_TENSORS];   // poison image of each output
    void *in_h[S_MAX_TENSORS];       // a probe's inputs and reference outputs,
    void *ref_h[S_MAX_TENSORS];      //   read back for its fingerprints
    kf_cuda_judge_t *judge;          // draws, compares and checks on the device
    kf_tensor_t in_t[S_MAX_TENSORS], ref_t[S_MAX_TENSORS], cand_t[S_MAX_TENSORS];
    kf_ctx_t ctx;
    const char **scalar_names;
    double *scalars;
    s_scratch_t scratch;
    void *stream, *ev0, *ev1, *flush;
    size_t flush_bytes;
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;
    char detail[512];
    //  Where the right answers come from: the reference's kf_forward
    //  (REF_FN), or exported PyTorch data (RD over DATA, no REF_FN).
    const kf_eval_refdata_t *rd;
    const char *data;
    kf_eval_degen_t *degen;  // a reference probe: fold the main case's sets
    double ref_s;            // reference time over the correctness calls
    int ref_calls;
    bool count_warm;         // the main case of a timed evaluation
    kf_eval_warm_t warm;     // its correctness calls, for the warm-up floor
} s_eval_t;

//  What a step found; the first non-S_OK ends the evaluation.
enum { S_OK = 0, S_INCORRECT, S_CRASHED, S_REF_FAILED, S_HARNESS };

//  A harness CUDA call that failed: the device, not a kernel, is at fault.
static int
s_harness (s_eval_t *e, int rc, const char *what)
{
    if (rc == 0)
        return S_OK;
    snprintf (e->detail, sizeof e->detail, "harness: %s: %s", what, s_err (rc));
    return S_HARNESS;
}

//  Calls FN once and waits for the device, all under PHASE, so a hang in
//  the kernel is blamed on the side that launched it.
static int
s_call (s_eval_t *e, s_forward_fn *fn, kf_tensor_t *out_t, char phase, int *cuda_rc)
{
    kf_eval_set_phase (phase);
    e->scratch.used = 0;
    int rc = fn (e->in_t, e->n_in, out_t, e->n_out, &e->ctx);
    *cuda_rc = s_settle ();
    kf_eval_set_phase ('H');
    return rc;
}

//  Poisons BUFS from the device's poison images and, with INPUTS, copies
//  the staged inputs into the kernels' input buffers; then waits for the
//  device, so no kernel (on any stream) can run before these copies land.
static int
s_stage (s_eval_t *e, s_dbuf_t *bufs, bool inputs)
{
    int rc = 0;
    for (int i = 0; inputs && i < e->n_in && !rc; i++)
        rc = s_api->Memcpy (e->in_d[i].data, e->src_d[i], e->in[i].bytes, KF_CUDA_D2D);
    for (int o = 0; o < e->n_out && !rc; o++)
        rc = s_api->Memcpy (bufs[o].data, e->poison_d[o], e->out[o].bytes, KF_CUDA_D2D);
    if (!rc)
        rc = s_api->DeviceSynchronize ();
    return s_harness (e, rc, "staging inputs and poisoning outputs");
}

static int
s_poison_outputs (s_eval_t *e, s_dbuf_t *bufs)
{
    return s_stage (e, bufs, false);
}

//  A judge call that failed: the device, not a kernel, is at fault.
static int
s_judge_failed (s_eval_t *e, int rc, const char *what)
{
    snprintf (e->detail, sizeof e->detail, "harness: %s on the device: CUDA error %d", what, rc);
    return S_HARNESS;
}

//  SET's inputs into the staging buffers: the exported ones copied up, or
//  drawn on the device (the values the host's kf_eval_fill would draw).
static int
s_draw_inputs (s_eval_t *e, uint64_t seed, int set)
{
    const kf_eval_refdata_t *rd = e->rd;
    for (int i = 0; i < e->n_in; i++) {
        int rc;
        if (rd) {
            rc = s_api->Memcpy (e->src_d[i], e->data + rd->in_off[set * rd->n_in + i],
                                e->in[i].bytes, KF_CUDA_H2D);
            if (rc)
                return s_harness (e, rc, "copying inputs to the device");
            continue;
        }
        kf_elem_dist_t d;
        kf_eval_dist (json_object_get (e->in[i].spec, "dist"), &d);
        rc = kf_cuda_judge_fill (e->judge, &d, e->in[i].dtype, e->src_d[i], e->in[i].numel,
                                 kf_eval_input_seed (seed, set, i));
        if (rc)
            return s_judge_failed (e, rc, "drawing inputs");
    }
    return S_OK;
}

//  A probe's fingerprints of this set: its inputs and the reference's
//  outputs, read back (a probe runs once per task, so the copies do not
//  matter).
static int
s_fingerprint (s_eval_t *e)
{
    uint64_t h = 0;
    for (int i = 0; i < e->n_in; i++) {
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if (!e->in_h[i] && !(e->in_h[i] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for a probe's inputs");
            return S_HARNESS;
        }
        int rc = s_api->Memcpy (e->in_h[i], e->src_d[i], e->in[i].bytes, KF_CUDA_D2H);
        if (rc)
            return s_harness (e, rc, "reading inputs back");
        h = kf_eval_hash (e->in_h[i], e->in[i].bytes, h);
    }
    kf_eval_degen_inputs (e->degen, h);
    for (int o = 0; o < e->n_out; o++) {
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        if (!e->ref_h[o] && !(e->ref_h[o] = malloc (n))) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for a probe's outputs");
            return S_HARNESS;
        }
        int rc = s_api->Memcpy (e->ref_h[o], e->ref_d[o].data, e->out[o].bytes, KF_CUDA_D2H);
        if (rc)
            return s_harness (e, rc, "reading reference outputs");
        kf_eval_degen_output (e->degen, o, &e->out[o], e->ref_h[o],
                              e->tol.atol_dtype[e->out[o].dtype]);
    }
    kf_eval_degen_end_set (e->degen);
    return S_OK;
}

//  After a candidate call: inputs as they were, canaries intact.
static int
s_check_memory (s_eval_t *e, const char *when)
{
    int rc;
    for (int i = 0; i < e->n_in; i++) {
        uint64_t differing = 0;
        rc = kf_cuda_judge_differ (e->judge, e->in_d[i].data, e->src_d[i], e->in[i].bytes,
                                   &differing);
        if (rc)
            return s_judge_failed (e, rc, "checking inputs");
        if (differing) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s' (%llu of %zu words differ)",
                      when, e->in[i].name, (unsigned long long) differing,
                      (e->in[i].bytes + 7) / 8);
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
            snprintf (e->detail, sizeof e->detail, "%s: out-of-bounds write %s %s '%s'",
                      when, where == 1 ? "before" : "past the end of",
                      t < e->n_in ? "input" : "output", name);
            return S_CRASHED;
        }
    }
    return S_OK;
}

//  The candidate's outputs against the right ones, on the device.
static int
s_compare (s_eval_t *e, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++) {
        kf_elem_part_t sum;
        int rc = kf_cuda_judge_compare (e->judge, e->out[o].dtype, e->cand_d[o].data,
                                        e->ref_d[o].data, e->out[o].numel, e->tol.rtol,
                                        kf_eval_atol (&e->tol, e->out[o].dtype), &sum);
        if (rc)
            return s_judge_failed (e, rc, "comparing outputs");
        if (kf_eval_judge_output (&e->tol, &e->worst, &e->out[o], &sum, when,
                                  bad ? ignored : e->detail,
                                  bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    }
    return bad ? S_INCORRECT : S_OK;
}

//  One correctness set: inputs (drawn, or the exported ones), the right
//  outputs (the reference's, or the exported ones), then the candidate on
//  the same inputs and every check. WHEN names the set in a detail.
static int
s_run_set (s_eval_t *e, uint64_t seed, int set, const char *when)
{
    int cuda_rc, r, st;
    const kf_eval_refdata_t *rd = e->rd;
    double t = s_now (), t0;
    if ((st = s_draw_inputs (e, seed, set)))
        return st;
    if (rd) {
        e->ctx.n_scalars = rd->n_scalars;
        e->ctx.scalar_names = rd->name_ptrs;
        e->ctx.scalars = rd->values + (size_t) set * (size_t) rd->n_scalars;
        for (int o = 0; o < e->n_out; o++) {
            int rc = s_api->Memcpy (e->ref_d[o].data, e->data + rd->out_off[set * rd->n_out + o],
                                    e->out[o].bytes, KF_CUDA_H2D);
            if (rc)
                return s_harness (e, rc, "copying the right outputs to the device");
        }
    }
    t0 = s_now ();
    kf_eval_split_add (KF_EVAL_S_INPUTS, t0 - t);
    t = t0;
    if (!rd) {
        if ((st = s_stage (e, e->ref_d, true)))
            return st;
        t0 = s_now ();
        kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
        r = s_call (e, e->ref_fn, e->ref_t, 'R', &cuda_rc);
        t = s_now ();
        kf_eval_split_add (KF_EVAL_S_CALLS, t - t0);
        e->ref_s += t - t0;
        e->ref_calls++;
        if (e->count_warm)
            kf_eval_warm_count (&e->warm, true, t0);
        if (cuda_rc || r) {
            if (cuda_rc)
                snprintf (e->detail, sizeof e->detail, "reference: CUDA error on %s: %s",
                          when, s_err (cuda_rc));
            else
                snprintf (e->detail, sizeof e->detail, "reference kf_forward returned %d on %s", r, when);
            return S_REF_FAILED;
        }
    }
    if (e->degen && (st = s_fingerprint (e)))
        return st;
    if (!e->cand_fn)
        return S_OK;            // a probe: the reference alone
    //  The candidate gets the inputs as drawn, whatever the reference did.
    if ((st = s_stage (e, e->cand_d, true)))
        return st;
    t0 = s_now ();
    kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
    r = s_call (e, e->cand_fn, e->cand_t, 'C', &cuda_rc);
    t = s_now ();
    kf_eval_split_add (KF_EVAL_S_CALLS, t - t0);
    if (e->count_warm)
        kf_eval_warm_count (&e->warm, false, t0);
    e->worst.sets++;
    if (cuda_rc) {
        snprintf (e->detail, sizeof e->detail, "%s: CUDA error in the candidate: %s",
                  when, s_err (cuda_rc));
        return S_CRASHED;
    }
    st = s_check_memory (e, when);
    t0 = s_now ();
    kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
    if (st)
        return st;
    if (r) {
        snprintf (e->detail, sizeof e->detail, "%s: candidate kf_forward returned %d", when, r);
        return S_INCORRECT;
    }
    st = s_compare (e, when);
    kf_eval_split_add (KF_EVAL_S_COMPARE, s_now () - t0);
    return st;
}

typedef struct {
    double *ref_ns, *cand_ns;        // per call, one entry per sample
    int samples, ref_calls, cand_calls;
    double overhead_ns;              // fixed cost of one sample, subtracted
    double warmup_s, topup_s, sampling_s, measured_s;   // the protocol as run
    int counted, topup;              // warm-up calls per side
} s_timing_t;

//  One sample: flush L2, wait for the device, CALLS calls between two
//  events, the second recorded after a device-wide synchronisation.
//  FN NULL times an empty sample. Returns S_OK with *NS for the whole
//  interval; S_INCORRECT when kf_forward failed; S_CRASHED on a CUDA
//  error after the calls (*CUDA_RC); S_HARNESS otherwise.
static int
s_sample (s_eval_t *e, s_forward_fn *fn, kf_tensor_t *out_t, int calls, char phase,
          unsigned salt, double *ns, int *cuda_rc)
{
    *cuda_rc = 0;
    int rc = s_api->MemsetAsync (e->flush, (int) (salt & 0x7f), e->flush_bytes, e->stream);
    if (!rc) rc = s_api->DeviceSynchronize ();
    if (!rc) rc = s_api->EventRecord (e->ev0, e->stream);
    if (rc)
        return s_harness (e, rc, "starting a sample");
    kf_eval_set_phase (phase);
    for (int k = 0; fn && k < calls; k++) {
        e->scratch.used = 0;
        if (fn (e->in_t, e->n_in, out_t, e->n_out, &e->ctx)) {
            *cuda_rc = s_settle ();
            kf_eval_set_phase ('H');
            return *cuda_rc ? S_CRASHED : S_INCORRECT;
        }
    }
    *cuda_rc = s_settle ();
    if (*cuda_rc) {
        kf_eval_set_phase ('H');
        return S_CRASHED;
    }
    rc = s_api->EventRecord (e->ev1, e->stream);
    if (!rc) rc = s_api->EventSynchronize (e->ev1);
    kf_eval_set_phase ('H');
    float ms = 0;
    if (!rc) rc = s_api->EventElapsedTime (&ms, e->ev0, e->ev1);
    if (rc)
        return s_harness (e, rc, "reading sample events");
    *ns = ms * 1e6;
    return S_OK;
}

//  A failed sample as a verdict step, blaming the side that ran.
static int
s_sample_failed (s_eval_t *e, int st, int is_ref, int cuda_rc)
{
    if (st == S_HARNESS)
        return st;
    if (is_ref) {
        snprintf (e->detail, sizeof e->detail, "reference failed during timing%s%s",
                  cuda_rc ? ": " : "", cuda_rc ? s_err (cuda_rc) : "");
        return S_REF_FAILED;
    }
    if (st == S_CRASHED)
        snprintf (e->detail, sizeof e->detail, "timing: CUDA error in the candidate: %s",
                  s_err (cuda_rc));
    else
        snprintf (e->detail, sizeof e->detail, "timing: candidate kf_forward returned non-zero");
    return st;
}

static int
s_calls_for (double per_call_ns)
{
    //  Samples of about a millisecond: far above the event resolution
    //  (about half a microsecond) and the subtracted overhead.
    double calls = per_call_ns > 0 ? ceil (1e6 / per_call_ns) : 1000;
    return calls < 1 ? 1 : calls > 100000 ? 100000 : (int) calls;
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
    int cuda_rc, st;
    double ns;

    //  The fixed cost of a sample: synchronise, record, read back.
    double null_ns[16];
    for (int k = 0; k < 20; k++) {
        if ((st = s_sample (e, NULL, NULL, 0, 'H', (unsigned) k, &ns, &cuda_rc)))
            return st == S_HARNESS ? st : s_harness (e, cuda_rc, "empty sample");
        if (k >= 4)
            null_ns[k - 4] = ns;
    }
    t->overhead_ns = kf_eval_median (null_ns, 16);

    //  Warm-up, interleaved, one call per sample, measuring each side's
    //  cost per call: what the correctness pass's calls left of the floor
    //  (kf_eval_warm_more). Without a reference kernel (PyTorch data) the
    //  candidate is timed alone, by the same protocol.
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double topup_from = s_now ();
    if (e->warm.since <= 0)
        e->warm.since = topup_from;
    while (kf_eval_warm_more (&e->warm, e->ref_fn != NULL, calls, s_now (), warmup_s,
                              warmup_calls)) {
        if (e->ref_fn) {
            if ((st = s_sample (e, e->ref_fn, e->ref_t, 1, 'R', (unsigned) calls, &ns, &cuda_rc)))
                return s_sample_failed (e, st, 1, cuda_rc);
            ref_total += fmax (ns - t->overhead_ns, 0);
        }
        if ((st = s_sample (e, e->cand_fn, e->cand_t, 1, 'C', (unsigned) calls, &ns, &cuda_rc)))
            return s_sample_failed (e, st, 0, cuda_rc);
        cand_total += fmax (ns - t->overhead_ns, 0);
        calls++;
    }
    double sampling_from = s_now ();
    t->warmup_s = sampling_from - e->warm.since;
    t->topup_s = sampling_from - topup_from;
    t->counted = kf_eval_warm_counted (&e->warm, e->ref_fn != NULL);
    t->topup = calls;
    t->ref_calls = s_calls_for (ref_total / calls);
    t->cand_calls = s_calls_for (cand_total / calls);
    //  A single cold call overstates the cost of calls in a loop; one
    //  trial sample each corrects the count.
    for (int side = e->ref_fn ? 0 : 1; side < 2; side++) {
        int *n = side ? &t->cand_calls : &t->ref_calls;
        if ((st = s_sample (e, side ? e->cand_fn : e->ref_fn, side ? e->cand_t : e->ref_t,
                            *n, side ? 'C' : 'R', 0, &ns, &cuda_rc)))
            return s_sample_failed (e, st, !side, cuda_rc);
        double net = ns - t->overhead_ns;
        if (net < 0.9e6)
            *n = s_calls_for (fmax (net, 1) / *n);
    }

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
        double ref_ns = 0, cand_ns;
        if (e->ref_fn
            && (st = s_sample (e, e->ref_fn, e->ref_t, t->ref_calls, 'R', salt, &ref_ns, &cuda_rc)))
            return s_sample_failed (e, st, 1, cuda_rc);
        if ((st = s_sample (e, e->cand_fn, e->cand_t, t->cand_calls, 'C', salt + 1, &cand_ns, &cuda_rc)))
            return s_sample_failed (e, st, 0, cuda_rc);
        //  Never let the subtraction eat a sample: a floor of 0.1% of it.
        t->ref_ns[t->samples] = e->ref_fn ? fmax (ref_ns - t->overhead_ns, ref_ns * 1e-3) / t->ref_calls : 0;
        t->cand_ns[t->samples] = fmax (cand_ns - t->overhead_ns, cand_ns * 1e-3) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    t->measured_s = measured;
    t->sampling_s = s_now () - sampling_from;
    return S_OK;
}

//  Bandwidth and FLOP rate against the measured ceilings, and the audit
//  flag (kf_eval_roofline). CAND_NS and REF_NS are medians (REF_NS 0:
//  no paired reference).
static void
s_roofline (s_eval_t *e, json_t *result, json_t *task, double cand_ns, double ref_ns,
            double speedup, const kf_eval_ceilings_t *ceil, size_t l2_bytes, double overhead_ns)
{
    double bytes = 0;
    for (int i = 0; i < e->n_in; i++)
        bytes += (double) e->in[i].bytes;
    for (int o = 0; o < e->n_out; o++)
        bytes += (double) e->out[o].bytes;
    json_t *fl = json_object_get (task, "flops");
    double flops = json_is_array (fl) ? json_number_value (json_array_get (fl, 0))
                                      : json_number_value (fl);
    //  Calls inside a sample find the data left in L2 by the call before,
    //  so the DRAM ceiling binds only when the data cannot stay there.
    bool applies = bytes > (double) l2_bytes;
    kf_eval_roofline (result, bytes, flops, cand_ns, ref_ns, ceil, applies, speedup);
    json_object_set_new (result, "sync_overhead_ns", json_real (overhead_ns));
}

//  Frees a case's tensors; DEVICE too for a shape case whose buffers
//  must make room for the next (the main case's go with the process,
//  which ends right after the verdict, and a sticky error would fail the
//  frees anyway).
static void
s_free_tensors (s_eval_t *e, bool device)
{
    for (int i = 0; i < S_MAX_TENSORS; i++) {
        free (e->in_h[i]);
        free (e->ref_h[i]);
        e->in_h[i] = e->ref_h[i] = NULL;
        if (device) {
            s_dbuf_t *bufs[3] = { &e->in_d[i], &e->ref_d[i], &e->cand_d[i] };
            for (int k = 0; k < 3; k++)
                if (bufs[k]->base) {
                    s_api->Free (bufs[k]->base);
                    bufs[k]->base = NULL;
                }
            void **plain[2] = { &e->src_d[i], &e->poison_d[i] };
            for (int k = 0; k < 2; k++)
                if (*plain[k]) {
                    s_api->Free (*plain[k]);
                    *plain[k] = NULL;
                }
        }
    }
    free (e->scalar_names);
    free (e->scalars);
    e->scalar_names = NULL;
    e->scalars = NULL;
}

//  Loads the reference (unless the right answers are exported data) and
//  the candidate (unless this is a probe). Returns S_OK, S_REF_FAILED, or
//  -1 when the candidate does not load.
static int
s_load (s_eval_t *e, const char *dir, bool data, bool probe)
{
    char path[4200];
    if (!data) {
        snprintf (path, sizeof path, "%s/reference.so", dir);
        void *ref_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
        e->ref_fn = ref_lib ? (s_forward_fn *) dlsym (ref_lib, "kf_forward") : NULL;
        if (!e->ref_fn) {
            snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
            return S_REF_FAILED;
        }
    }
    if (probe)
        return S_OK;
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    kf_eval_set_phase ('C');    // constructors of the candidate run in dlopen
    void *cand_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    e->cand_fn = cand_lib ? (s_forward_fn *) dlsym (cand_lib, "kf_forward") : NULL;
    kf_eval_set_phase ('H');
    if (!e->cand_fn) {
        const char *err = dlerror ();
        snprintf (e->detail, sizeof e->detail, "candidate does not load: %s",
                  err ? err : "no kf_forward");
        return -1;              // load_failed
    }
    //  Libraries stay loaded: the process ends right after the verdict.
    return S_OK;
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
    int rc = s_api->Memcpy (p, chunk, done, KF_CUDA_H2D);
    free (chunk);
    while (!rc && done < bytes) {
        size_t k = done < bytes - done ? done : bytes - done;
        rc = s_api->Memcpy ((char *) p + done, p, k, KF_CUDA_D2D);
        done += k;
    }
    return rc;
}

//  A case's tensors: device buffers between canaries and host images for
//  TASK's (possibly reshaped) inputs and outputs, and the scalars.
static int
s_setup (s_eval_t *e, json_t *task)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > S_MAX_TENSORS || e->n_out > S_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return S_REF_FAILED;
    }
    int rc;
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail))
            return S_REF_FAILED;
        size_t n = e->in[i].bytes ? e->in[i].bytes : 1;
        if ((rc = s_dbuf_new (&e->in_d[i], e->in[i].bytes))
            || (rc = s_api->Malloc (&e->src_d[i], n)))
            return s_harness (e, rc, "allocating inputs");
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->in_d[i].data);
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail, sizeof e->detail))
            return S_REF_FAILED;
        size_t n = e->out[o].bytes ? e->out[o].bytes : 1;
        //  Separate allocations: outputs never alias inputs or each other.
        if ((rc = s_dbuf_new (&e->ref_d[o], e->out[o].bytes))
            || (rc = s_dbuf_new (&e->cand_d[o], e->out[o].bytes))
            || (rc = s_api->Malloc (&e->poison_d[o], n))
            || (rc = s_poison_image (e->poison_d[o], e->out[o].dtype, e->out[o].numel,
                                     e->out[o].bytes)))
            return s_harness (e, rc, "allocating outputs");
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_d[o].data);
        kf_eval_tensor (&e->cand_t[o], &e->out[o], e->cand_d[o].data);
    }
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
    e->ctx.n_scalars = 0;
    json_object_foreach (scalars, key, value) {
        e->scalar_names[e->ctx.n_scalars] = key;
        e->scalars[e->ctx.n_scalars++] = json_number_value (value);
    }
    e->ctx.backend = KF_BACKEND_CUDA;
    e->ctx.stream = e->stream;
    e->ctx.scalar_names = e->scalar_names;
    e->ctx.scalars = e->scalars;
    e->ctx.scratch_alloc = s_scratch_alloc;
    e->ctx.scratch_state = &e->scratch;
    return S_OK;
}

//  Folds the figures of a shape case into the evaluation's.
static void
s_merge_worst (kf_eval_worst_t *into, const kf_eval_worst_t *w)
{
    into->sets += w->sets;
    if (w->match_fraction < into->match_fraction)
        into->match_fraction = w->match_fraction;
    if (w->cosine < into->cosine)
        into->cosine = w->cosine;
    if (w->max_abs > into->max_abs)
        into->max_abs = w->max_abs;
    if (w->max_rel > into->max_rel)
        into->max_rel = w->max_rel;
    into->nonfinite_mismatch += w->nonfinite_mismatch;
}

static int
s_cuda_child_main (const char *dir, json_t *job)
{
    if (kf_eval_child_begin (dir) != 0)
        return 2;
    char why[400];
    int device = (int) json_integer_value (json_object_get (job, "device"));
    double t = s_now ();
    if (s_load_api (device, why, sizeof why)) {
        kf_eval_write_verdict (dir, "harness_failed", why);
        return 0;
    }
    kf_eval_split_add (KF_EVAL_S_CONTEXT, s_now () - t);
    s_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    json_t *refdata = json_object_get (job, "reference_data");
    bool probe = json_is_true (json_object_get (job, "probe"));
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    kf_eval_worst_t total = e->worst;
    kf_eval_refdata_t rd;
    memset (&rd, 0, sizeof rd);
    kf_eval_degen_t degen;
    kf_eval_degen_init (&degen, (int) json_array_size (json_object_get (task, "outputs")));
    const char *data = NULL;
    size_t data_size = 0;
    s_timing_t tm = { 0 };
    json_t *result = NULL;
    s_devinfo_t info;
    memset (&info, 0, sizeof info);
    //  The worker's own ceilings when it passes them (measured once, at
    //  its start, for its capabilities), so every evaluation is judged
    //  against the same figures; otherwise (a standalone --eval) measured
    //  here.
    json_t *given = json_object_get (job, "ceilings");
    kf_eval_ceilings_t ceil = { 0 };
    if (json_is_object (given) && kf_eval_num (given, "copy_gbs", 0) > 0) {
        ceil.copy_gbs = kf_eval_num (given, "copy_gbs", 0);
        ceil.peak_gflops = kf_eval_num (given, "peak_gflops", 0);
        ceil.peak_source = json_string_value (json_object_get (given, "peak_source"));
    }
    bool measure_ceilings = ceil.copy_gbs <= 0;
    const char *verdict = "correct";
    int n_cases = 1;

    int st = S_OK;
    if (json_is_object (refdata)) {
        data = kf_refdata_map (dir, job, &data_size);
        if (!data || kf_eval_refdata_parse (&rd, task, refdata, data_size, e->detail,
                                            sizeof e->detail)) {
            if (!data)
                snprintf (e->detail, sizeof e->detail, "reference data does not load");
            st = S_REF_FAILED;
        }
        e->rd = &rd;
        e->data = data;
    }
    t = s_now ();
    if (st == S_OK)
        st = s_load (e, dir, e->rd != NULL, probe);
    if (st < 0) {
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }
    kf_eval_split_add (KF_EVAL_S_MODULES, s_now () - t);
    t = s_now ();
    if (!st && s_devinfo (device, &info, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %s", why);
        st = S_HARNESS;
    }
    kf_eval_split_add (KF_EVAL_S_DEVICE, s_now () - t);
    t = s_now ();
    if (!st && measure_ceilings && !probe
        && s_copy_bandwidth (&ceil.copy_gbs, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "harness: %s", why);
        st = S_HARNESS;
    }
    kf_eval_split_add (KF_EVAL_S_CEILINGS, s_now () - t);
    t = s_now ();
    int rc;
    if (!st && ((rc = s_api->StreamCreateWithFlags (&e->stream, 0))
                || (rc = s_api->EventCreate (&e->ev0))
                || (rc = s_api->EventCreate (&e->ev1))))
        st = s_harness (e, rc, "creating the stream and events");
    if (!st && !(e->judge = kf_cuda_judge_new (s_api, why, sizeof why))) {
        snprintf (e->detail, sizeof e->detail, "harness: %s", why);
        st = S_HARNESS;
    }
    //  The flush buffer: twice the L2, so nothing of the last sample
    //  survives in it.
    size_t flush_bytes = 2 * (size_t) (info.l2_bytes > 0 ? info.l2_bytes : 64 << 20);
    if (!st && (st = s_harness (e, s_api->Malloc (&e->flush, flush_bytes),
                                "allocating the L2 flush buffer")) == S_OK)
        e->flush_bytes = flush_bytes;
    kf_eval_split_add (KF_EVAL_S_DEVICE, s_now () - t);
    kf_eval_stamp (KF_EVAL_T_LOADED);

    //  Correctness: the main shape (5 fresh input sets, or every exported
    //  set), then 2 sets of each extra shape case in buffers of its own;
    //  the main case's stay for the timing.
    n_cases = e->rd ? 1 : kf_eval_n_cases (task);
    for (int c = 0; c < n_cases && st == S_OK; c++) {
        s_eval_t *ce = e;
        if (c > 0) {
            ce = calloc (1, sizeof *ce);
            if (!ce) {
                snprintf (e->detail, sizeof e->detail, "harness: out of memory for a shape case");
                st = S_HARNESS;
                break;
            }
            ce->ref_fn = e->ref_fn;
            ce->cand_fn = e->cand_fn;
            ce->tol = e->tol;
            ce->worst.match_fraction = ce->worst.cosine = 1;
            ce->stream = e->stream;
            ce->judge = e->judge;
        }
        ce->degen = probe && c == 0 ? &degen : NULL;
        ce->count_warm = !probe && c == 0;
        json_t *case_task = kf_eval_case_task (task, c);
        char label[256] = "";
        if (c > 0)
            kf_eval_case_label (task, c, label, sizeof label);
        st = s_setup (ce, case_task);
        int n_sets = c > 0 ? 2 : e->rd ? e->rd->n_sets : 5;
        for (int set = 0; set < n_sets && st == S_OK; set++) {
            char when[320];
            snprintf (when, sizeof when, "%s%sset %d", label, c > 0 ? ", " : "", set);
            st = s_run_set (ce, seed, c * 100 + set, when);
        }
        json_decref (case_task);
        s_merge_worst (&total, &ce->worst);
        if (ce != e) {
            snprintf (e->detail, sizeof e->detail, "%s", ce->detail);
            s_free_tensors (ce, true);
            free (ce);
        }
    }
    kf_eval_stamp (KF_EVAL_T_CHECKED);

    if (probe && st == S_OK) {
        result = json_pack ("{s:s, s:b, s:o, s:f, s:i, s:i}", "verdict", "probed", "ok", 1,
                            "degenerate", kf_eval_degen_json (&degen), "reference_ms",
                            e->ref_calls ? e->ref_s * 1e3 / e->ref_calls : 0.0,
                            "sets", degen.sets, "cases", n_cases);
        kf_eval_write_result (dir, result);
        goto done;
    }

    //  Timing on the main shape's last set, then the outputs of the timing
    //  loop checked against that set's right outputs.
    if (st == S_OK && (st = s_poison_outputs (e, e->cand_d)) == S_OK
        && (st = s_time (e, timing, &tm)) == S_OK
        && (st = s_check_memory (e, "timing")) == S_OK)
        st = s_compare (e, "timing");
    kf_eval_stamp (KF_EVAL_T_TIMED);

    if (st == S_REF_FAILED || st == S_HARNESS) {
        kf_eval_write_verdict (dir, st == S_REF_FAILED ? "reference_failed" : "harness_failed",
                               e->detail);
        goto done;
    }
    verdict = st == S_OK ? "correct" : st == S_CRASHED ? "crashed" : "incorrect";
    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (st == S_OK ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&total));
    json_object_set_new (json_object_get (result, "correctness"), "cases", json_integer (n_cases));
    json_object_set_new (result, "device", json_pack ("{s:s, s:i}", "name", info.name,
                                                      "index", device));
    if (st == S_OK && tm.samples > 0) {
        double cand_med = kf_eval_median (tm.cand_ns, tm.samples), ref_med, speedup;
        json_object_set_new (result, "candidate", kf_eval_timing_json (tm.cand_ns, tm.samples, tm.cand_calls));
        if (e->rd) {
            //  Not a paired ratio: eager PyTorch was timed in its own job.
            speedup = cand_med > 0 ? e->rd->eager_ns / cand_med : 0;
            ref_med = e->rd->eager_ns;
            json_object_set_new (result, "reference", json_pack ("{s:f, s:s}", "median_ns",
                                 e->rd->eager_ns, "kind", "pytorch-eager"));
            json_object_set_new (result, "speedup_compiled",
                                 e->rd->compiled_ns > 0 && cand_med > 0
                                 ? json_real (e->rd->compiled_ns / cand_med) : json_null ());
        }
        else {
            speedup = kf_eval_paired_speedup (tm.ref_ns, tm.cand_ns, tm.samples);
            ref_med = kf_eval_median (tm.ref_ns, tm.samples);
            json_object_set_new (result, "reference", kf_eval_timing_json (tm.ref_ns, tm.samples, tm.ref_calls));
        }
        json_object_set_new (result, "speedup", speedup >= 0 ? json_real (speedup) : json_null ());
        json_object_set_new (result, "protocol", json_pack (
            "{s:f, s:i, s:i, s:i, s:f, s:f, s:f}", "warmup_s", tm.warmup_s,
            "warmup_calls", tm.counted + tm.topup, "correctness_calls", tm.counted,
            "topup_calls", tm.topup, "topup_s", tm.topup_s, "sampling_s", tm.sampling_s,
            "measured_s", tm.measured_s));
        //  The compute ceiling, measured here like the copy bandwidth (when
        //  the worker did not pass both), only for a result that will be
        //  reported against it.
        if (measure_ceilings) {
            char peak_why[200];
            t = s_now ();
            s_fma_peak (info.sms, &ceil.peak_gflops, &ceil.peak_source, peak_why, sizeof peak_why);
            kf_eval_split_add (KF_EVAL_S_CEILINGS, s_now () - t);
        }
        s_roofline (e, result, task, cand_med, ref_med, speedup, &ceil, (size_t) info.l2_bytes,
                    tm.overhead_ns);
    }
    else
        json_object_set_new (result, "speedup", json_null ());
    json_object_set_new (result, "split_s", kf_eval_split_json ());
    kf_eval_write_result (dir, result);

done:
    json_decref (result);
    free (tm.ref_ns);
    free (tm.cand_ns);
    s_free_tensors (e, false);
    kf_cuda_judge_destroy (&e->judge);
    free (e);
    kf_refdata_unmap (data, data_size);
    kf_eval_refdata_free (&rd);
    return 0;
}

const kf_exec_backend_t kf_exec_backend_cuda = {
    .name = "cuda",
    .child_main = s_cuda_child_main,
    .devices = NULL,
    .probe = s_cuda_probe,
    .unlimited_address_space = 1,
};
