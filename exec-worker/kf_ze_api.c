/*  kf_ze_api.c - dlopen the Level Zero loader and fill the function table.
 *
 *  The loader (libze_loader.so.1, Debian's libze1) finds the drivers
 *  (Intel's compute runtime, libze_intel_gpu.so.1) on its own; without
 *  one, or without a device a driver accepts, zeInit fails with
 *  ZE_RESULT_ERROR_UNINITIALIZED. That is the state of every machine
 *  without an Intel GPU, and the message is made to say so.
 */
#include "kf_ze_api.h"
#include "kf_take.h"

#include "kf_dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
s_open (char *path, size_t path_size, char *why, size_t why_size)
{
    static const char *const names[] = { "libze_loader.so.1", "libze_loader.so", NULL };
    return kf_dlib_open ("KF_ZE_LOADER", names, RTLD_NOW | RTLD_LOCAL,
                         "the Level Zero loader is not installed (libze_loader.so.1 "
                         "not found; Debian package libze1; or set KF_ZE_LOADER)",
                         path, path_size, why, why_size);
}

kf_ze_api_t *
kf_ze_api_new (char *why, size_t why_size)
{
    kf_ze_api_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    void *lib = s_open (self->path, sizeof self->path, why, why_size);
    if (!lib) {
        free (self);
        return NULL;
    }
    struct { void **slot; const char *name; } syms[] = {
        { (void **) &self->Init, "zeInit" },
        { (void **) &self->DriverGet, "zeDriverGet" },
        { (void **) &self->DeviceGet, "zeDeviceGet" },
        { (void **) &self->DeviceGetProperties, "zeDeviceGetProperties" },
        { (void **) &self->DeviceGetComputeProperties, "zeDeviceGetComputeProperties" },
        { (void **) &self->DeviceGetMemoryProperties, "zeDeviceGetMemoryProperties" },
        { (void **) &self->DeviceGetCacheProperties, "zeDeviceGetCacheProperties" },
        { (void **) &self->DeviceGetCommandQueueGroupProperties,
          "zeDeviceGetCommandQueueGroupProperties" },
        { (void **) &self->ContextCreate, "zeContextCreate" },
        { (void **) &self->ContextDestroy, "zeContextDestroy" },
        { (void **) &self->CommandQueueCreate, "zeCommandQueueCreate" },
        { (void **) &self->CommandQueueDestroy, "zeCommandQueueDestroy" },
        { (void **) &self->CommandQueueExecuteCommandLists, "zeCommandQueueExecuteCommandLists" },
        { (void **) &self->CommandQueueSynchronize, "zeCommandQueueSynchronize" },
        { (void **) &self->CommandListCreate, "zeCommandListCreate" },
        { (void **) &self->CommandListDestroy, "zeCommandListDestroy" },
        { (void **) &self->CommandListClose, "zeCommandListClose" },
        { (void **) &self->CommandListReset, "zeCommandListReset" },
        { (void **) &self->CommandListAppendLaunchKernel, "zeCommandListAppendLaunchKernel" },
        { (void **) &self->CommandListAppendBarrier, "zeCommandListAppendBarrier" },
        { (void **) &self->CommandListAppendMemoryCopy, "zeCommandListAppendMemoryCopy" },
        { (void **) &self->CommandListAppendMemoryFill, "zeCommandListAppendMemoryFill" },
        { (void **) &self->CommandListAppendWriteGlobalTimestamp,
          "zeCommandListAppendWriteGlobalTimestamp" },
        { (void **) &self->MemAllocDevice, "zeMemAllocDevice" },
        { (void **) &self->MemAllocHost, "zeMemAllocHost" },
        { (void **) &self->MemFree, "zeMemFree" },
        { (void **) &self->ModuleCreate, "zeModuleCreate" },
        { (void **) &self->ModuleDestroy, "zeModuleDestroy" },
        { (void **) &self->ModuleBuildLogGetString, "zeModuleBuildLogGetString" },
        { (void **) &self->ModuleBuildLogDestroy, "zeModuleBuildLogDestroy" },
        { (void **) &self->KernelCreate, "zeKernelCreate" },
        { (void **) &self->KernelDestroy, "zeKernelDestroy" },
        { (void **) &self->KernelSetGroupSize, "zeKernelSetGroupSize" },
        { (void **) &self->KernelSetArgumentValue, "zeKernelSetArgumentValue" },
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *fn = dlsym (lib, syms[i].name);
        if (!fn) {
            snprintf (why, why_size, "%s lacks %s", self->path, syms[i].name);
            free (self);
            return NULL;
        }
        *syms[i].slot = fn;
    }
    return self;
}

void
kf_ze_api_destroy (kf_ze_api_t **self_p)
{
    free (KF_TAKE (self_p));
}

const char *
kf_ze_api_error (uint32_t rc, char *buf, size_t size)
{
    static const struct { uint32_t rc; const char *name; } names[] = {
        { 0, "ZE_RESULT_SUCCESS" },
        { 1, "ZE_RESULT_NOT_READY" },
        { 0x70000001, "ZE_RESULT_ERROR_DEVICE_LOST" },
        { 0x70000002, "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY" },
        { 0x70000003, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" },
        { 0x70000004, "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE" },
        { 0x70000005, "ZE_RESULT_ERROR_MODULE_LINK_FAILURE" },
        { 0x70000006, "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET" },
        { 0x70000007, "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE" },
        { 0x78000001, "ZE_RESULT_ERROR_UNINITIALIZED" },
        { 0x78000002, "ZE_RESULT_ERROR_UNSUPPORTED_VERSION" },
        { 0x78000003, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE" },
        { 0x78000004, "ZE_RESULT_ERROR_INVALID_ARGUMENT" },
        { 0x78000005, "ZE_RESULT_ERROR_INVALID_NULL_HANDLE" },
        { 0x78000007, "ZE_RESULT_ERROR_INVALID_NULL_POINTER" },
        { 0x78000008, "ZE_RESULT_ERROR_INVALID_SIZE" },
        { 0x78000009, "ZE_RESULT_ERROR_UNSUPPORTED_SIZE" },
        { 0x78000011, "ZE_RESULT_ERROR_INVALID_KERNEL_NAME" },
        { 0x78000013, "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION" },
        { 0x78000015, "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX" },
        { 0x78000016, "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE" },
        { 0x7ffffffe, "ZE_RESULT_ERROR_UNKNOWN" },
    };
    const char *name = "ZE_RESULT_?";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].rc == rc)
            name = names[i].name;
    snprintf (buf, size, "%s (0x%x)", name, rc);
    return buf;
}

int
kf_ze_api_gpus (kf_ze_api_t *self, kf_ze_handle_t *drivers, kf_ze_handle_t *devices,
                int max, char *why, size_t why_size)
{
    char err[96];
    uint32_t rc = self->Init (KF_ZE_INIT_FLAG_GPU_ONLY);
    if (rc != KF_ZE_SUCCESS) {
        snprintf (why, why_size, "zeInit: %s%s", kf_ze_api_error (rc, err, sizeof err),
                  rc == KF_ZE_ERROR_UNINITIALIZED
                  ? ": no Level Zero driver found (no Intel GPU, or its compute runtime is not installed)"
                  : "");
        return -1;
    }
    uint32_t n_drivers = 0;
    rc = self->DriverGet (&n_drivers, NULL);
    if (rc != KF_ZE_SUCCESS || n_drivers == 0) {
        snprintf (why, why_size, "zeDriverGet: %s",
                  rc ? kf_ze_api_error (rc, err, sizeof err) : "no drivers");
        return -1;
    }
    kf_ze_handle_t found_drivers[16];
    if (n_drivers > 16)
        n_drivers = 16;
    rc = self->DriverGet (&n_drivers, found_drivers);
    if (rc != KF_ZE_SUCCESS) {
        snprintf (why, why_size, "zeDriverGet: %s", kf_ze_api_error (rc, err, sizeof err));
        return -1;
    }
    int gpus = 0;
    for (uint32_t d = 0; d < n_drivers; d++) {
        uint32_t n = 0;
        if (self->DeviceGet (found_drivers[d], &n, NULL) != KF_ZE_SUCCESS || n == 0)
            continue;
        kf_ze_handle_t handles[64];
        if (n > 64)
            n = 64;
        if (self->DeviceGet (found_drivers[d], &n, handles) != KF_ZE_SUCCESS)
            continue;
        for (uint32_t k = 0; k < n; k++) {
            kf_ze_device_properties_t p;
            memset (&p, 0, sizeof p);
            p.stype = KF_ZE_STYPE_DEVICE_PROPERTIES;
            if (self->DeviceGetProperties (handles[k], &p) != KF_ZE_SUCCESS
                || p.type != KF_ZE_DEVICE_TYPE_GPU)
                continue;
            if (gpus < max) {
                drivers[gpus] = found_drivers[d];
                devices[gpus] = handles[k];
            }
            gpus++;
        }
    }
    if (gpus == 0)
        snprintf (why, why_size, "%u driver%s but no GPU device", n_drivers,
                  n_drivers == 1 ? "" : "s");
    return gpus;
}
