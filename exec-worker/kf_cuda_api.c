/*  kf_cuda_api.c - dlopen libcudart and fill the function table.
 *
 *  Versioned names first: a deployed host usually has only
 *  libcudart.so.N from the driver-matched runtime package, while the
 *  unversioned link name exists only where the toolkit is installed.
 */
#include "kf_cuda_api.h"
#include "kf_take.h"

#include "kf_dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
s_open (char *path, size_t path_size, char *why, size_t why_size)
{
    static const char *const names[] = {
        "libcudart.so.13", "libcudart.so.12", "libcudart.so",
        "/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.12",
        "/usr/local/cuda/lib64/libcudart.so", NULL
    };
    return kf_dlib_open ("KF_CUDART", names, RTLD_NOW | RTLD_GLOBAL,
                         "libcudart not found (tried libcudart.so.13, .so.12, .so and "
                         "/usr/local/cuda/lib64; set KF_CUDART)",
                         path, path_size, why, why_size);
}

//  The driver's virtual memory management (kf_cuda_api.h): all of it,
//  or none.
static void
s_vmm (kf_cuda_api_t *self, void *drv)
{
    struct { void **slot; const char *name; } syms[] = {
        { (void **) &self->MemGetAllocationGranularity, "cuMemGetAllocationGranularity" },
        { (void **) &self->MemCreate, "cuMemCreate" },
        { (void **) &self->MemRelease, "cuMemRelease" },
        { (void **) &self->MemAddressReserve, "cuMemAddressReserve" },
        { (void **) &self->MemAddressFree, "cuMemAddressFree" },
        { (void **) &self->MemMap, "cuMemMap" },
        { (void **) &self->MemUnmap, "cuMemUnmap" },
        { (void **) &self->MemSetAccess, "cuMemSetAccess" },
        { (void **) &self->MemExportToShareableHandle, "cuMemExportToShareableHandle" },
        { (void **) &self->MemImportFromShareableHandle, "cuMemImportFromShareableHandle" },
        { (void **) &self->DrvErrorName, "cuGetErrorName" },
    };
    size_t n = sizeof syms / sizeof syms[0], found = 0;
    for (size_t i = 0; i < n; i++)
        found += (*syms[i].slot = dlsym (drv, syms[i].name)) != NULL;
    if (found < n)
        for (size_t i = 0; i < n; i++)
            *syms[i].slot = NULL;
}

kf_cuda_api_t *
kf_cuda_api_new (char *why, size_t why_size)
{
    kf_cuda_api_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    void *lib = s_open (self->path, sizeof self->path, why, why_size);
    if (!lib) {
        free (self);
        return NULL;
    }
    //  Each entry: the table slot and the exported names to try, newest
    //  first (CUDA 12 exported cudaGetDeviceProperties_v2 beside the old
    //  name; CUDA 13 keeps only the plain one).
    struct { void **slot; const char *names[2]; } syms[] = {
        { (void **) &self->GetDeviceCount, { "cudaGetDeviceCount", NULL } },
        { (void **) &self->SetDevice, { "cudaSetDevice", NULL } },
        { (void **) &self->SetDeviceFlags, { "cudaSetDeviceFlags", NULL } },
        { (void **) &self->GetDeviceProperties, { "cudaGetDeviceProperties_v2", "cudaGetDeviceProperties" } },
        { (void **) &self->DeviceGetAttribute, { "cudaDeviceGetAttribute", NULL } },
        { (void **) &self->MemGetInfo, { "cudaMemGetInfo", NULL } },
        { (void **) &self->Malloc, { "cudaMalloc", NULL } },
        { (void **) &self->Free, { "cudaFree", NULL } },
        { (void **) &self->Memcpy, { "cudaMemcpy", NULL } },
        { (void **) &self->Memset, { "cudaMemset", NULL } },
        { (void **) &self->MemsetAsync, { "cudaMemsetAsync", NULL } },
        { (void **) &self->StreamCreateWithFlags, { "cudaStreamCreateWithFlags", NULL } },
        { (void **) &self->StreamDestroy, { "cudaStreamDestroy", NULL } },
        { (void **) &self->DeviceSynchronize, { "cudaDeviceSynchronize", NULL } },
        { (void **) &self->EventCreate, { "cudaEventCreate", NULL } },
        { (void **) &self->EventRecord, { "cudaEventRecord", NULL } },
        { (void **) &self->EventSynchronize, { "cudaEventSynchronize", NULL } },
        { (void **) &self->EventElapsedTime, { "cudaEventElapsedTime", NULL } },
        { (void **) &self->EventDestroy, { "cudaEventDestroy", NULL } },
        { (void **) &self->GetLastError, { "cudaGetLastError", NULL } },
        { (void **) &self->GetErrorName, { "cudaGetErrorName", NULL } },
        { (void **) &self->GetErrorString, { "cudaGetErrorString", NULL } },
        { (void **) &self->RuntimeGetVersion, { "cudaRuntimeGetVersion", NULL } },
        { (void **) &self->DriverGetVersion, { "cudaDriverGetVersion", NULL } },
        { (void **) &self->DeviceReset, { "cudaDeviceReset", NULL } },
        { (void **) &self->StreamSynchronize, { "cudaStreamSynchronize", NULL } },
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *fn = NULL;
        for (int k = 0; k < 2 && !fn && syms[i].names[k]; k++)
            fn = dlsym (lib, syms[i].names[k]);
        if (!fn) {
            snprintf (why, why_size, "%s lacks %s", self->path, syms[i].names[0]);
            free (self);
            return NULL;
        }
        *syms[i].slot = fn;
    }
    //  The driver's own library, for PTX modules: optional, and only the
    //  peak-FLOP measurement needs it.
    void *drv = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (drv) {
        self->ModuleLoadData = (int (*) (void **, const void *)) dlsym (drv, "cuModuleLoadData");
        self->ModuleGetFunction = (int (*) (void **, void *, const char *)) dlsym (drv, "cuModuleGetFunction");
        self->LaunchKernel = (int (*) (void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, void *, void **, void **))
                             dlsym (drv, "cuLaunchKernel");
        self->ModuleUnload = (int (*) (void *)) dlsym (drv, "cuModuleUnload");
        if (!self->ModuleLoadData || !self->ModuleGetFunction || !self->LaunchKernel
            || !self->ModuleUnload)
            self->ModuleLoadData = NULL;
        s_vmm (self, drv);
    }
    return self;
}

void
kf_cuda_api_destroy (kf_cuda_api_t **self_p)
{
    free (KF_TAKE (self_p));
}

const char *
kf_cuda_api_error (const kf_cuda_api_t *self, int error, char *buf, size_t size)
{
    const char *name = self->GetErrorName (error);
    const char *text = self->GetErrorString (error);
    snprintf (buf, size, "%s (%s)", text ? text : "unknown error", name ? name : "?");
    return buf;
}

int
kf_cuda_api_open_device (kf_cuda_api_t *self, int device, char *why, size_t why_size)
{
    char err[256];
    int count = 0;
    int rc = self->GetDeviceCount (&count);
    if (rc != KF_CUDA_SUCCESS) {
        snprintf (why, why_size, "cudaGetDeviceCount: %s",
                  kf_cuda_api_error (self, rc, err, sizeof err));
        return -1;
    }
    if (count <= 0) {
        snprintf (why, why_size, "the driver reports no devices");
        return -1;
    }
    if (device < 0 || device >= count) {
        snprintf (why, why_size, "device %d requested, %d present", device, count);
        return -1;
    }
    rc = self->SetDevice (device);
    if (rc != KF_CUDA_SUCCESS) {
        snprintf (why, why_size, "cudaSetDevice(%d): %s", device,
                  kf_cuda_api_error (self, rc, err, sizeof err));
        return -1;
    }
    //  Spin while waiting for the device: the timing loop synchronises
    //  after every sample, and a sleeping wait adds wake-up jitter to
    //  each. Flags apply to the current device, hence after SetDevice;
    //  a runtime that refuses them on a live context still works.
    self->SetDeviceFlags (KF_CUDA_SCHEDULE_SPIN);
    self->GetLastError ();
    return 0;
}
