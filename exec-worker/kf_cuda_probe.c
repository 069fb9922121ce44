/*  kf_cuda_probe.c - the CUDA device and its ceilings (kf_cuda_eval.h):
 *  the runtime loaded and the device opened, its name and properties, the
 *  measured copy bandwidth and f32 FMA peak, and the worker's probe that
 *  describes the GPU for its capabilities.
 */
#include "kf_cuda_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_COPY_BYTES ((size_t) 256 << 20)

// --------------------------------------------------------------------------
//  Device memory bandwidth: a device-to-device copy of 256 MiB, ten times,
//  between events. Counted as bytes read plus bytes written, which is how
//  the achieved bandwidth of a candidate is counted too.

int
kf_cuda_copy_bandwidth (double *gbs, char *why, size_t why_size)
{
    void *a = NULL, *b = NULL, *e0 = NULL, *e1 = NULL;
    const int reps = 10;
    float ms = 0;
    int rc = kf_cuda_eval_api->Malloc (&a, S_COPY_BYTES);
    if (!rc) rc = kf_cuda_eval_api->Malloc (&b, S_COPY_BYTES);
    if (!rc) rc = kf_cuda_eval_api->Memset (a, 1, S_COPY_BYTES);
    if (!rc) rc = kf_cuda_eval_api->EventCreate (&e0);
    if (!rc) rc = kf_cuda_eval_api->EventCreate (&e1);
    if (!rc) rc = kf_cuda_eval_api->Memcpy (b, a, S_COPY_BYTES, KF_CUDA_D2D);
    if (!rc) rc = kf_cuda_eval_api->DeviceSynchronize ();
    if (!rc) rc = kf_cuda_eval_api->EventRecord (e0, NULL);
    for (int k = 0; k < reps && !rc; k++)
        rc = kf_cuda_eval_api->Memcpy (b, a, S_COPY_BYTES, KF_CUDA_D2D);
    if (!rc) rc = kf_cuda_eval_api->EventRecord (e1, NULL);
    if (!rc) rc = kf_cuda_eval_api->EventSynchronize (e1);
    if (!rc) rc = kf_cuda_eval_api->EventElapsedTime (&ms, e0, e1);
    if (rc)
        snprintf (why, why_size, "copy bandwidth: %s", kf_cuda_err (rc));
    else
        *gbs = ms > 0 ? 2.0 * (double) S_COPY_BYTES * reps / (ms * 1e-3) / 1e9 : 0;
    if (e0) kf_cuda_eval_api->EventDestroy (e0);
    if (e1) kf_cuda_eval_api->EventDestroy (e1);
    if (a) kf_cuda_eval_api->Free (a);
    if (b) kf_cuda_eval_api->Free (b);
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
int
kf_cuda_fma_peak (int sms, double *gflops, const char **source, char *why, size_t why_size)
{
    *gflops = 0;
    *source = "none";
    if (!kf_cuda_eval_api->ModuleLoadData) {
        snprintf (why, why_size, "no driver API (libcuda.so.1) for the FMA kernel");
        return -1;
    }
    void *module = NULL, *fn = NULL, *out = NULL, *e0 = NULL, *e1 = NULL;
    int rc = kf_cuda_eval_api->ModuleLoadData (&module, s_fma_ptx);
    if (!rc) rc = kf_cuda_eval_api->ModuleGetFunction (&fn, module, "kf_fma_peak");
    if (!rc) rc = kf_cuda_eval_api->Malloc (&out, 256);
    if (!rc) rc = kf_cuda_eval_api->EventCreate (&e0);
    if (!rc) rc = kf_cuda_eval_api->EventCreate (&e1);
    unsigned iters = 8192, blocks = (unsigned) (sms > 0 ? sms : 1) * 4, threads = 256;
    double best_ms = 0;
    for (int r = 0; r < 4 && !rc; r++) {
        void *params[] = { &out, &iters };
        float ms = 0;
        rc = kf_cuda_eval_api->EventRecord (e0, NULL);
        if (!rc) rc = kf_cuda_eval_api->LaunchKernel (fn, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL);
        if (!rc) rc = kf_cuda_eval_api->EventRecord (e1, NULL);
        if (!rc) rc = kf_cuda_eval_api->EventSynchronize (e1);
        if (!rc) rc = kf_cuda_eval_api->EventElapsedTime (&ms, e0, e1);
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
    if (e0) kf_cuda_eval_api->EventDestroy (e0);
    if (e1) kf_cuda_eval_api->EventDestroy (e1);
    if (out) kf_cuda_eval_api->Free (out);
    if (module) kf_cuda_eval_api->ModuleUnload (module);
    kf_cuda_eval_api->GetLastError ();
    return rc ? -1 : 0;
}

int
kf_cuda_devinfo (int device, kf_cuda_devinfo_t *d, char *why, size_t why_size)
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
    int rc = kf_cuda_eval_api->GetDeviceProperties (prop, device);
    if (!rc) {
        memcpy (d->name, prop, sizeof d->name - 1);
        d->name[sizeof d->name - 1] = 0;
    }
    free (prop);
    if (!rc) rc = kf_cuda_eval_api->DeviceGetAttribute (&d->cc_major, KF_CUDA_ATTR_CC_MAJOR, device);
    if (!rc) rc = kf_cuda_eval_api->DeviceGetAttribute (&d->cc_minor, KF_CUDA_ATTR_CC_MINOR, device);
    if (!rc) rc = kf_cuda_eval_api->DeviceGetAttribute (&d->sms, KF_CUDA_ATTR_MULTIPROCESSORS, device);
    if (!rc) rc = kf_cuda_eval_api->DeviceGetAttribute (&d->l2_bytes, KF_CUDA_ATTR_L2_BYTES, device);
    size_t free_bytes = 0;
    if (!rc) rc = kf_cuda_eval_api->MemGetInfo (&free_bytes, &d->memory_bytes);
    if (rc) {
        snprintf (why, why_size, "device properties: %s", kf_cuda_err (rc));
        return -1;
    }
    return 0;
}

int
kf_cuda_load_api (int device, char *why, size_t why_size)
{
    char reason[400];
    if (!kf_cuda_eval_api)
        kf_cuda_eval_api = kf_cuda_api_new (reason, sizeof reason);
    if (!kf_cuda_eval_api) {
        snprintf (why, why_size, "no CUDA device: %s", reason);
        return -1;
    }
    if (kf_cuda_api_open_device (kf_cuda_eval_api, device, reason, sizeof reason)) {
        snprintf (why, why_size, "no CUDA device: %s", reason);
        return -1;
    }
    return 0;
}

json_t *
kf_cuda_probe (int device, char *why, size_t why_size)
{
    if (kf_cuda_load_api (device, why, why_size))
        return NULL;
    kf_cuda_devinfo_t d;
    double gbs = 0;
    char reason[400];
    if (kf_cuda_devinfo (device, &d, reason, sizeof reason)
        || kf_cuda_copy_bandwidth (&gbs, reason, sizeof reason)) {
        snprintf (why, why_size, "no CUDA device: %s", reason);
        kf_cuda_eval_api->DeviceReset ();
        return NULL;
    }
    double peak = 0;
    const char *peak_source = "none";
    char peak_why[200];
    kf_cuda_fma_peak (d.sms, &peak, &peak_source, peak_why, sizeof peak_why);
    int runtime = 0, driver = 0;
    kf_cuda_eval_api->RuntimeGetVersion (&runtime);
    kf_cuda_eval_api->DriverGetVersion (&driver);
    //  Give the context back: the worker parent only describes the GPU;
    //  every evaluation child makes its own.
    kf_cuda_eval_api->DeviceReset ();
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
                             "runtime", kf_cuda_eval_api->path);
    json_object_set_new (dev, "peak_gflops", json_real (round (peak)));
    json_object_set_new (dev, "peak_source", json_string (peak_source));
    return json_pack ("{s:s, s:[o]}", "arch", arch, "devices", dev);
}
