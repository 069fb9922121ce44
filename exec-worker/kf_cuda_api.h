/*  kf_cuda_api.h - the CUDA runtime, loaded when it is asked for.
 *
 *  The exec worker must start, and serve the host backend, on machines
 *  with no NVIDIA driver and no CUDA toolkit, so nothing links against
 *  libcudart: kf_cuda_api_new() dlopens it and looks up the handful of
 *  runtime functions the CUDA backend uses into this table. Kernels are
 *  built with `nvcc -cudart shared`, so a kernel's .so and the harness
 *  resolve to this same library and share one runtime and one context.
 *
 *  Only plain C types cross this interface (handles are void *, errors
 *  int), so the worker builds without CUDA headers. The numbers below are
 *  the runtime's own ABI values (driver_types.h).
 */
#ifndef KF_CUDA_API_H
#define KF_CUDA_API_H

#include <stddef.h>

#define KF_CUDA_SUCCESS 0
#define KF_CUDA_H2D 1                     /* cudaMemcpyHostToDevice */
#define KF_CUDA_D2H 2                     /* cudaMemcpyDeviceToHost */
#define KF_CUDA_D2D 3                     /* cudaMemcpyDeviceToDevice */
#define KF_CUDA_SCHEDULE_SPIN 1           /* cudaDeviceScheduleSpin */
#define KF_CUDA_ATTR_MULTIPROCESSORS 16   /* cudaDevAttrMultiProcessorCount */
#define KF_CUDA_ATTR_L2_BYTES 38          /* cudaDevAttrL2CacheSize */
#define KF_CUDA_ATTR_CC_MAJOR 75          /* cudaDevAttrComputeCapabilityMajor */
#define KF_CUDA_ATTR_CC_MINOR 76          /* cudaDevAttrComputeCapabilityMinor */
#define KF_CUDA_ATTR_CLOCK_KHZ 13         /* cudaDevAttrClockRate */

typedef struct {
    char path[256];                       /* the library that was loaded */
    int (*GetDeviceCount) (int *count);
    int (*SetDevice) (int device);
    int (*SetDeviceFlags) (unsigned flags);
    int (*GetDeviceProperties) (void *prop, int device);
    int (*DeviceGetAttribute) (int *value, int attr, int device);
    int (*MemGetInfo) (size_t *free_bytes, size_t *total_bytes);
    int (*Malloc) (void **ptr, size_t bytes);
    int (*Free) (void *ptr);
    int (*Memcpy) (void *dst, const void *src, size_t bytes, int kind);
    int (*Memset) (void *ptr, int value, size_t bytes);
    int (*MemsetAsync) (void *ptr, int value, size_t bytes, void *stream);
    int (*StreamCreateWithFlags) (void **stream, unsigned flags);
    int (*StreamDestroy) (void *stream);
    int (*DeviceSynchronize) (void);
    int (*EventCreate) (void **event);
    int (*EventRecord) (void *event, void *stream);
    int (*EventSynchronize) (void *event);
    int (*EventElapsedTime) (float *ms, void *start, void *end);
    int (*EventDestroy) (void *event);
    int (*GetLastError) (void);
    const char *(*GetErrorName) (int error);
    const char *(*GetErrorString) (int error);
    int (*RuntimeGetVersion) (int *version);
    int (*DriverGetVersion) (int *version);
    int (*DeviceReset) (void);
    /* The driver API (libcuda.so.1), for loading a kernel from PTX text
     * without a compiler; NULL when the driver library lacks them. They
     * work in the runtime's current (primary) context. */
    int (*ModuleLoadData) (void **module, const void *image);
    int (*ModuleGetFunction) (void **function, void *module, const char *name);
    int (*LaunchKernel) (void *function, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                         void *stream, void **params, void **extra);
    int (*ModuleUnload) (void *module);
    int (*StreamSynchronize) (void *stream);
    /* The driver's virtual memory management, for device memory the judge
     * shares with the candidate's process through a file descriptor
     * (kf_cuda_share.h); NULL (all of them) when the driver lacks one.
     * Handles are the driver's 64-bit CUmemGenericAllocationHandle,
     * device addresses its CUdeviceptr; PROP and DESC point at the
     * layouts kf_cuda_share.c spells out. Errors are the driver's
     * CUresult values, named by DrvErrorName. */
    int (*MemGetAllocationGranularity) (size_t *granularity, const void *prop, int option);
    int (*MemCreate) (unsigned long long *handle, size_t size, const void *prop,
                      unsigned long long flags);
    int (*MemRelease) (unsigned long long handle);
    int (*MemAddressReserve) (unsigned long long *ptr, size_t size, size_t alignment,
                              unsigned long long addr, unsigned long long flags);
    int (*MemAddressFree) (unsigned long long ptr, size_t size);
    int (*MemMap) (unsigned long long ptr, size_t size, size_t offset, unsigned long long handle,
                   unsigned long long flags);
    int (*MemUnmap) (unsigned long long ptr, size_t size);
    int (*MemSetAccess) (unsigned long long ptr, size_t size, const void *desc, size_t count);
    int (*MemExportToShareableHandle) (void *shareable, unsigned long long handle, int type,
                                       unsigned long long flags);
    int (*MemImportFromShareableHandle) (unsigned long long *handle, void *os_handle, int type);
    int (*DrvErrorName) (int error, const char **name);
} kf_cuda_api_t;

/* Loads libcudart (KF_CUDART names a file to use instead; otherwise
 * libcudart.so.13, .so.12, .so on the loader's path, then the same names
 * in /usr/local/cuda/lib64) and looks up every function. Returns NULL
 * with WHY (one line) when the library or a function is missing. The
 * library stays loaded for the life of the process: the runtime does not
 * survive being unloaded and reloaded. */
kf_cuda_api_t *kf_cuda_api_new (char *why, size_t why_size);
void kf_cuda_api_destroy (kf_cuda_api_t **self_p);

/* Makes DEVICE current, after checking the driver answers and the device
 * exists. Returns 0, or -1 with WHY: the runtime's message, for example
 * "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA
 * runtime version (cudaErrorInsufficientDriver)". */
int kf_cuda_api_open_device (kf_cuda_api_t *self, int device, char *why, size_t why_size);

/* "NAME: message" for ERROR, into BUF. Returns BUF. */
const char *kf_cuda_api_error (const kf_cuda_api_t *self, int error, char *buf, size_t size);

#endif
