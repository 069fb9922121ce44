/*  kf_ocl_device.c - the OpenCL device an evaluation runs on
 *  (kf_ocl_eval.h): the platform and device chosen by index or by name,
 *  the context and its one in-order queue with profiling, copies between
 *  host and device memory, and what the worker reports of the device
 *  (name, compute units, memory, and the copy bandwidth and FMA peak,
 *  measured as the CUDA backend measures them).
 */
#include "kf_ocl_eval.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_MAX_DEVICES 64

kf_ocl_dev_t kf_ocl_dev;

const char *
kf_ocl_selection (int device, char *buf, size_t size)
{
    const char *forced = getenv ("KF_OPENCL_DEVICE");
    if (forced && *forced)
        return forced;
    snprintf (buf, size, "%d", device);
    return buf;
}

static bool
s_digits (const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!isdigit ((unsigned char) *s))
            return false;
    return true;
}

static void
s_info_str (kf_cl_handle device, kf_cl_uint what, char *buf, size_t size)
{
    buf[0] = 0;
    if (kf_ocl_dev.api->GetDeviceInfo (device, what, size, buf, NULL) != KF_CL_SUCCESS)
        buf[0] = 0;
    buf[size - 1] = 0;
}

//  Every platform's devices, in order, into DEVS (their platforms in
//  PLATS, the platforms' places in PLAT_AT); the count, or -1 with WHY.
static int
s_all_devices (kf_cl_handle *devs, kf_cl_handle *plats, int *plat_at, char *why,
               size_t why_size)
{
    kf_cl_handle platforms[16];
    kf_cl_uint n_plat = 0;
    kf_cl_int rc = kf_ocl_dev.api->GetPlatformIDs (16, platforms, &n_plat);
    if (rc != KF_CL_SUCCESS || n_plat == 0) {
        snprintf (why, why_size, "no OpenCL device: the ICD loader (%s) finds no platform: %s "
                  "(install one: Debian's pocl-opencl-icd for the host CPU)",
                  kf_ocl_dev.api->path, kf_ocl_err (rc));
        return -1;
    }
    int n = 0;
    for (kf_cl_uint p = 0; p < n_plat && p < 16; p++) {
        kf_cl_uint got = 0;
        if (kf_ocl_dev.api->GetDeviceIDs (platforms[p], KF_CL_DEVICE_TYPE_ALL,
                                          (kf_cl_uint) (S_MAX_DEVICES - n), devs + n, &got)
            != KF_CL_SUCCESS)
            continue;
        for (kf_cl_uint d = 0; d < got && n < S_MAX_DEVICES; d++) {
            plat_at[n] = (int) p;
            plats[n++] = platforms[p];
        }
    }
    if (n == 0)
        snprintf (why, why_size, "no OpenCL device: %u platform(s), none with a device",
                  (unsigned) n_plat);
    return n ? n : -1;
}

static void
s_plat_name (kf_cl_handle plat, char *buf, size_t size)
{
    if (kf_ocl_dev.api->GetPlatformInfo (plat, KF_CL_PLATFORM_NAME, size, buf, NULL)
        != KF_CL_SUCCESS)
        buf[0] = 0;
    buf[size - 1] = 0;
}

//  Does WANT (an index among N_SEEN before it, or a piece of NAME, any
//  case) name this one?
static bool
s_matches (const char *want, int index, const char *name)
{
    if (!*want)
        return index == 0;
    if (s_digits (want))
        return strtol (want, NULL, 10) == index;
    return strcasestr (name, want) != NULL;
}

//  What there is, for a refusal: "0 'NAME' (PLATFORM), 1 ...".
static void
s_list (kf_cl_handle *devs, kf_cl_handle *plats, int n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n && at + 1 < size; i++) {
        char dev_name[256], plat_name[128];
        s_info_str (devs[i], KF_CL_DEVICE_NAME, dev_name, sizeof dev_name);
        s_plat_name (plats[i], plat_name, sizeof plat_name);
        int w = snprintf (buf + at, size - at, "%s%d '%.80s' (%.60s)", i ? ", " : "", i, dev_name,
                          plat_name);
        if (w < 0)
            break;
        at += (size_t) w;
    }
}

//  The index in DEVS of the device SELECT names, or -1 with WHY listing
//  what there is. SELECT: an index among all devices; NAME, a piece of a
//  device's or its platform's name; or PLATFORM/DEVICE, each an index
//  (the device's among its platform's) or a piece of the name.
static int
s_choose (const char *select, kf_cl_handle *devs, kf_cl_handle *plats, const int *plat_at, int n,
          char *why, size_t why_size)
{
    const char *slash = select ? strchr (select, '/') : NULL;
    char plat_want[128] = "", dev_want[256] = "";
    if (slash) {
        snprintf (plat_want, sizeof plat_want, "%.*s", (int) (slash - select), select);
        snprintf (dev_want, sizeof dev_want, "%s", slash + 1);
    }
    for (int i = 0, in_plat = 0; i < n; i++) {
        char dev_name[256], plat_name[128];
        s_info_str (devs[i], KF_CL_DEVICE_NAME, dev_name, sizeof dev_name);
        s_plat_name (plats[i], plat_name, sizeof plat_name);
        in_plat = i > 0 && plat_at[i] == plat_at[i - 1] ? in_plat + 1 : 0;
        if (!select || !*select || s_digits (select)) {
            if (s_matches (select ? select : "", i, ""))
                return i;
        }
        else if (slash) {
            if (s_matches (plat_want, plat_at[i], plat_name)
                && s_matches (dev_want, in_plat, dev_name))
                return i;
        }
        else if (strcasestr (dev_name, select) || strcasestr (plat_name, select))
            return i;
    }
    char there[600];
    s_list (devs, plats, n, there, sizeof there);
    if (!select || !*select || s_digits (select))
        snprintf (why, why_size, "no OpenCL device: device %s asked for, %d found: %s",
                  select && *select ? select : "0", n, there);
    else
        snprintf (why, why_size, "no OpenCL device: none of the %d device(s) matches '%.100s' "
                  "(a piece of a device's or platform's name, an index, or PLATFORM/DEVICE): "
                  "%s", n, select, there);
    return -1;
}

int
kf_ocl_preload (char *why, size_t why_size)
{
    if (!kf_ocl_dev.api && !(kf_ocl_dev.api = kf_ocl_api_new (why, why_size)))
        return -1;
    kf_cl_uint n = 0;
    kf_ocl_dev.api->GetPlatformIDs (0, NULL, &n);
    return 0;
}

int
kf_ocl_open (const char *select, char *why, size_t why_size)
{
    char reason[300];
    if (!kf_ocl_dev.api && !(kf_ocl_dev.api = kf_ocl_api_new (reason, sizeof reason))) {
        snprintf (why, why_size, "no OpenCL device: %s", reason);
        return -1;
    }
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_handle devs[S_MAX_DEVICES], plats[S_MAX_DEVICES];
    int plat_at[S_MAX_DEVICES];
    int n = s_all_devices (devs, plats, plat_at, why, why_size);
    int i = n > 0 ? s_choose (select, devs, plats, plat_at, n, why, why_size) : -1;
    if (i < 0)
        return -1;
    kf_ocl_dev.index = i;
    kf_ocl_dev.device = devs[i];
    kf_ocl_dev.platform = plats[i];
    if (api->GetPlatformInfo (plats[i], KF_CL_PLATFORM_NAME, sizeof kf_ocl_dev.platform_name,
                              kf_ocl_dev.platform_name, NULL) != KF_CL_SUCCESS)
        kf_ocl_dev.platform_name[0] = 0;
    kf_ocl_dev.platform_name[sizeof kf_ocl_dev.platform_name - 1] = 0;
    s_info_str (devs[i], KF_CL_DEVICE_NAME, kf_ocl_dev.name, sizeof kf_ocl_dev.name);
    s_info_str (devs[i], KF_CL_DEVICE_VERSION, kf_ocl_dev.version, sizeof kf_ocl_dev.version);
    s_info_str (devs[i], KF_CL_DRIVER_VERSION, kf_ocl_dev.driver, sizeof kf_ocl_dev.driver);
    char il[128];
    s_info_str (devs[i], KF_CL_DEVICE_IL_VERSION, il, sizeof il);
    kf_ocl_dev.il = strstr (il, "SPIR-V") != NULL;
    kf_cl_uint align_bits = 0;
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_MAX_COMPUTE_UNITS, sizeof (kf_cl_uint),
                        &kf_ocl_dev.compute_units, NULL);
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof (kf_cl_uint),
                        &kf_ocl_dev.clock_mhz, NULL);
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof (size_t),
                        &kf_ocl_dev.max_group_size, NULL);
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_GLOBAL_MEM_SIZE, sizeof (uint64_t),
                        &kf_ocl_dev.memory_bytes, NULL);
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof (uint64_t),
                        &kf_ocl_dev.cache_bytes, NULL);
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof (uint64_t),
                        &kf_ocl_dev.max_alloc, NULL);
    api->GetDeviceInfo (devs[i], KF_CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof (kf_cl_uint),
                        &align_bits, NULL);
    //  A sub-buffer must start at a multiple of the base alignment.
    kf_ocl_dev.pad = 256;
    while (kf_ocl_dev.pad < align_bits / 8)
        kf_ocl_dev.pad *= 2;
    kf_cl_int rc;
    kf_ocl_dev.context = api->CreateContext (NULL, 1, &kf_ocl_dev.device, NULL, NULL, &rc);
    if (!kf_ocl_dev.context || rc != KF_CL_SUCCESS) {
        snprintf (why, why_size, "no OpenCL device: %s: creating a context: %s", kf_ocl_dev.name,
                  kf_ocl_err (rc));
        return -1;
    }
    kf_ocl_dev.queue = api->CreateCommandQueue (kf_ocl_dev.context, kf_ocl_dev.device,
                                                KF_CL_QUEUE_PROFILING_ENABLE, &rc);
    if (!kf_ocl_dev.queue || rc != KF_CL_SUCCESS) {
        snprintf (why, why_size, "no OpenCL device: %s: creating a profiling queue: %s",
                  kf_ocl_dev.name, kf_ocl_err (rc));
        return -1;
    }
    return 0;
}

void
kf_ocl_close (void)
{
    if (kf_ocl_dev.queue)
        kf_ocl_dev.api->ReleaseCommandQueue (kf_ocl_dev.queue);
    if (kf_ocl_dev.context)
        kf_ocl_dev.api->ReleaseContext (kf_ocl_dev.context);
    kf_ocl_dev.queue = kf_ocl_dev.context = NULL;
}

kf_cl_int
kf_ocl_alloc (kf_cl_handle *mem, size_t bytes)
{
    kf_cl_int rc = KF_CL_SUCCESS;
    *mem = kf_ocl_dev.api->CreateBuffer (kf_ocl_dev.context, KF_CL_MEM_READ_WRITE,
                                         bytes ? bytes : 1, NULL, &rc);
    return *mem ? rc : (rc ? rc : -4);
}

kf_cl_int
kf_ocl_upload (kf_cl_handle dst, const void *src, size_t offset, size_t bytes)
{
    if (!bytes)
        return KF_CL_SUCCESS;
    return kf_ocl_dev.api->EnqueueWriteBuffer (kf_ocl_dev.queue, dst, KF_CL_TRUE, offset, bytes,
                                               src, 0, NULL, NULL);
}

kf_cl_int
kf_ocl_download (void *dst, kf_cl_handle src, size_t offset, size_t bytes)
{
    if (!bytes)
        return KF_CL_SUCCESS;
    return kf_ocl_dev.api->EnqueueReadBuffer (kf_ocl_dev.queue, src, KF_CL_TRUE, offset, bytes,
                                              dst, 0, NULL, NULL);
}

//  Nanoseconds from the start to the end of EVENT (waited for).
static kf_cl_int
s_event_ns (kf_cl_handle event, double *ns)
{
    kf_cl_ulong t0 = 0, t1 = 0;
    kf_cl_int rc = kf_ocl_dev.api->WaitForEvents (1, &event);
    if (!rc)
        rc = kf_ocl_dev.api->GetEventProfilingInfo (event, KF_CL_PROFILING_COMMAND_START,
                                                    sizeof t0, &t0, NULL);
    if (!rc)
        rc = kf_ocl_dev.api->GetEventProfilingInfo (event, KF_CL_PROFILING_COMMAND_END,
                                                    sizeof t1, &t1, NULL);
    kf_ocl_dev.api->ReleaseEvent (event);
    *ns = t1 > t0 ? (double) (t1 - t0) : 0;
    return rc;
}

//  Eight independent chains of fused multiply-adds per work-item.
static const char s_fma_source[] =
    "__kernel void kf_fma (__global float *out, float a, float b) {\n"
    "  float x0 = get_global_id (0), x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;\n"
    "  float x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;\n"
    "  for (int i = 0; i < 256; i++) {\n"
    "    x0 = fma (x0, a, b); x1 = fma (x1, a, b); x2 = fma (x2, a, b); x3 = fma (x3, a, b);\n"
    "    x4 = fma (x4, a, b); x5 = fma (x5, a, b); x6 = fma (x6, a, b); x7 = fma (x7, a, b);\n"
    "  }\n"
    "  out[get_global_id (0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"
    "}\n";

static int
s_fma_peak (double *gflops, char *why, size_t why_size)
{
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_int rc;
    const char *src = s_fma_source;
    kf_cl_handle prog = api->CreateProgramWithSource (kf_ocl_dev.context, 1, &src, NULL, &rc);
    kf_cl_handle kernel = NULL, out = NULL;
    size_t global = (size_t) (kf_ocl_dev.compute_units ? kf_ocl_dev.compute_units : 1) * 16384;
    if (prog && !rc)
        rc = api->BuildProgram (prog, 1, &kf_ocl_dev.device, "", NULL, NULL);
    if (!rc)
        kernel = api->CreateKernel (prog, "kf_fma", &rc);
    if (!rc)
        rc = kf_ocl_alloc (&out, global * sizeof (float));
    float a = 0.999f, b = 0.001f;
    if (!rc) rc = api->SetKernelArg (kernel, 0, sizeof out, &out);
    if (!rc) rc = api->SetKernelArg (kernel, 1, sizeof a, &a);
    if (!rc) rc = api->SetKernelArg (kernel, 2, sizeof b, &b);
    double best = 0;
    for (int k = 0; k < 4 && !rc; k++) {
        kf_cl_handle ev = NULL;
        double ns = 0;
        rc = api->EnqueueNDRangeKernel (kf_ocl_dev.queue, kernel, 1, NULL, &global, NULL, 0, NULL,
                                        &ev);
        if (!rc)
            rc = s_event_ns (ev, &ns);
        double g = ns > 0 ? (double) global * 256 * 8 * 2 / ns : 0;
        best = k > 0 && g > best ? g : best;      // the first call warms up
    }
    if (out) api->ReleaseMemObject (out);
    if (kernel) api->ReleaseKernel (kernel);
    if (prog) api->ReleaseProgram (prog);
    if (rc) {
        snprintf (why, why_size, "measuring the FMA peak: %s", kf_ocl_err (rc));
        return -1;
    }
    *gflops = best;
    return 0;
}

int
kf_ocl_measure (double *gbs, double *gflops, char *why, size_t why_size)
{
    size_t bytes = (size_t) 64 << 20;
    if (kf_ocl_dev.max_alloc && bytes > kf_ocl_dev.max_alloc)
        bytes = (size_t) kf_ocl_dev.max_alloc;
    kf_cl_handle a = NULL, b = NULL;
    kf_cl_int rc = kf_ocl_alloc (&a, bytes);
    if (!rc)
        rc = kf_ocl_alloc (&b, bytes);
    unsigned char zero = 0;
    if (!rc)
        rc = kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, a, &zero, 1, 0, bytes, 0,
                                                NULL, NULL);
    double best = 0;
    for (int k = 0; k < 4 && !rc; k++) {
        kf_cl_handle ev = NULL;
        double ns = 0;
        rc = kf_ocl_dev.api->EnqueueCopyBuffer (kf_ocl_dev.queue, a, b, 0, 0, bytes, 0, NULL, &ev);
        if (!rc)
            rc = s_event_ns (ev, &ns);
        double g = ns > 0 ? 2.0 * (double) bytes / ns : 0;
        best = k > 0 && g > best ? g : best;
    }
    if (a) kf_ocl_dev.api->ReleaseMemObject (a);
    if (b) kf_ocl_dev.api->ReleaseMemObject (b);
    if (rc) {
        snprintf (why, why_size, "measuring the copy bandwidth: %s", kf_ocl_err (rc));
        return -1;
    }
    *gbs = best;
    return gflops ? s_fma_peak (gflops, why, why_size) : 0;
}

json_t *
kf_ocl_describe (const char *select, char *why, size_t why_size)
{
    if (kf_ocl_open (select, why, why_size))
        return NULL;
    double gbs = 0, gflops = 0;
    char reason[300];
    if (kf_ocl_measure (&gbs, &gflops, reason, sizeof reason)) {
        snprintf (why, why_size, "no OpenCL device: %s: %s", kf_ocl_dev.name, reason);
        kf_ocl_close ();
        return NULL;
    }
    json_t *dev = json_pack (
        "{s:i, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:i, s:f, s:f, s:s, s:b, s:s}",
        "index", kf_ocl_dev.index, "name", kf_ocl_dev.name, "platform", kf_ocl_dev.platform_name,
        "version", kf_ocl_dev.version, "driver", kf_ocl_dev.driver,
        "compute_units", (int) kf_ocl_dev.compute_units,
        "max_group_size", (int) kf_ocl_dev.max_group_size,
        "memory_bytes", (json_int_t) kf_ocl_dev.memory_bytes,
        "cache_bytes", (json_int_t) kf_ocl_dev.cache_bytes,
        "core_clock_mhz", (int) kf_ocl_dev.clock_mhz,
        "copy_bandwidth_gbs", round (gbs * 10) / 10, "peak_gflops", round (gflops),
        "peak_source", "measured (FMA kernel)", "spirv_il", kf_ocl_dev.il,
        "loader", kf_ocl_dev.api->path);
    //  The parent only describes the device; every evaluation child opens
    //  its own context.
    kf_ocl_close ();
    //  The compile worker builds one artifact (the KF-SPIRV bundle) for
    //  every OpenCL device; the exec worker builds its source for this one.
    return json_pack ("{s:s, s:[o]}", "arch", "spir64", "devices", dev);
}

#if defined(__SANITIZE_ADDRESS__)
//  Sanitizer builds (tests only): the platform's compiler, loaded into
//  the process by the ICD loader (PoCL's LLVM), keeps what it allocates
//  until the process ends, which LeakSanitizer would report at every
//  exit of a process that opened a device. Only those libraries'
//  allocations are passed over; ours are still checked.
const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
    return "leak:libpocl.so\nleak:libLLVM\nleak:libOpenCL.so\nleak:libclang\n";
}
#endif
