/*  kf_ocl_api.h - the OpenCL ICD loader, loaded when it is asked for.
 *
 *  As with Level Zero (kf_ze_api.h), the exec worker must build and start
 *  where no OpenCL is installed, so nothing links against libOpenCL:
 *  kf_ocl_api_new() dlopens the ICD loader (libOpenCL.so.1, Debian's
 *  ocl-icd-libopencl1; or KF_OPENCL_LIBRARY) and looks up the OpenCL 1.2
 *  functions the opencl backend uses into this table. The few types and
 *  constants used are written out below from the Khronos headers (CL/cl.h),
 *  so no OpenCL header is needed to build; tests/unit/test_ocl.c compares
 *  them with the real header where it is installed.
 */
#ifndef KF_OCL_API_H
#define KF_OCL_API_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t kf_cl_int;
typedef uint32_t kf_cl_uint;
typedef uint64_t kf_cl_ulong;
typedef void *kf_cl_handle;            // platform, device, context, queue, mem, ...

#define KF_CL_SUCCESS 0
#define KF_CL_TRUE 1
#define KF_CL_BUILD_PROGRAM_FAILURE (-11)
#define KF_CL_INVALID_KERNEL_NAME (-46)
#define KF_CL_PLATFORM_NOT_FOUND_KHR (-1001)

#define KF_CL_PLATFORM_VERSION 0x0901
#define KF_CL_PLATFORM_NAME 0x0902
#define KF_CL_PLATFORM_VENDOR 0x0903
#define KF_CL_DEVICE_TYPE_ALL 0xFFFFFFFFu
#define KF_CL_DEVICE_TYPE 0x1000
#define KF_CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define KF_CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define KF_CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define KF_CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define KF_CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019
#define KF_CL_DEVICE_GLOBAL_MEM_CACHE_SIZE 0x101E
#define KF_CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define KF_CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define KF_CL_DEVICE_PROFILING_TIMER_RESOLUTION 0x1025
#define KF_CL_DEVICE_NAME 0x102B
#define KF_CL_DEVICE_VENDOR 0x102C
#define KF_CL_DRIVER_VERSION 0x102D
#define KF_CL_DEVICE_VERSION 0x102F
#define KF_CL_DEVICE_IL_VERSION 0x105B
#define KF_CL_QUEUE_PROFILING_ENABLE (1u << 1)
#define KF_CL_MEM_READ_WRITE (1u << 0)
#define KF_CL_MEM_USE_HOST_PTR (1u << 3)
#define KF_CL_MAP_READ (1u << 0)
#define KF_CL_MAP_WRITE (1u << 1)
#define KF_CL_DEVICE_TYPE_CPU (1u << 1)
#define KF_CL_INVALID_OPERATION (-59)
#define KF_CL_BUFFER_CREATE_TYPE_REGION 0x1220
#define KF_CL_PROGRAM_BUILD_LOG 0x1183
#define KF_CL_PROGRAM_BINARY_SIZES 0x1165
#define KF_CL_PROGRAM_BINARIES 0x1166
#define KF_CL_PROFILING_COMMAND_START 0x1282
#define KF_CL_PROFILING_COMMAND_END 0x1283

typedef struct {
    size_t origin;
    size_t size;
} kf_cl_buffer_region_t;

typedef struct {
    char path[256];
    kf_cl_int (*GetPlatformIDs) (kf_cl_uint, kf_cl_handle *, kf_cl_uint *);
    kf_cl_int (*GetPlatformInfo) (kf_cl_handle, kf_cl_uint, size_t, void *, size_t *);
    kf_cl_int (*GetDeviceIDs) (kf_cl_handle, kf_cl_ulong, kf_cl_uint, kf_cl_handle *,
                               kf_cl_uint *);
    kf_cl_int (*GetDeviceInfo) (kf_cl_handle, kf_cl_uint, size_t, void *, size_t *);
    kf_cl_handle (*CreateContext) (const intptr_t *, kf_cl_uint, const kf_cl_handle *,
                                   void *, void *, kf_cl_int *);
    kf_cl_int (*ReleaseContext) (kf_cl_handle);
    kf_cl_handle (*CreateCommandQueue) (kf_cl_handle, kf_cl_handle, kf_cl_ulong, kf_cl_int *);
    kf_cl_int (*ReleaseCommandQueue) (kf_cl_handle);
    kf_cl_handle (*CreateBuffer) (kf_cl_handle, kf_cl_ulong, size_t, void *, kf_cl_int *);
    kf_cl_handle (*CreateSubBuffer) (kf_cl_handle, kf_cl_ulong, kf_cl_uint, const void *,
                                     kf_cl_int *);
    kf_cl_int (*ReleaseMemObject) (kf_cl_handle);
    kf_cl_int (*EnqueueFillBuffer) (kf_cl_handle, kf_cl_handle, const void *, size_t, size_t,
                                    size_t, kf_cl_uint, const kf_cl_handle *, kf_cl_handle *);
    kf_cl_int (*EnqueueWriteBuffer) (kf_cl_handle, kf_cl_handle, kf_cl_uint, size_t, size_t,
                                     const void *, kf_cl_uint, const kf_cl_handle *,
                                     kf_cl_handle *);
    kf_cl_int (*EnqueueReadBuffer) (kf_cl_handle, kf_cl_handle, kf_cl_uint, size_t, size_t,
                                    void *, kf_cl_uint, const kf_cl_handle *, kf_cl_handle *);
    kf_cl_int (*EnqueueCopyBuffer) (kf_cl_handle, kf_cl_handle, kf_cl_handle, size_t, size_t,
                                    size_t, kf_cl_uint, const kf_cl_handle *, kf_cl_handle *);
    kf_cl_handle (*CreateProgramWithSource) (kf_cl_handle, kf_cl_uint, const char **,
                                             const size_t *, kf_cl_int *);
    kf_cl_int (*BuildProgram) (kf_cl_handle, kf_cl_uint, const kf_cl_handle *, const char *,
                               void *, void *);
    kf_cl_int (*GetProgramBuildInfo) (kf_cl_handle, kf_cl_handle, kf_cl_uint, size_t, void *,
                                      size_t *);
    kf_cl_int (*ReleaseProgram) (kf_cl_handle);
    kf_cl_int (*GetProgramInfo) (kf_cl_handle, kf_cl_uint, size_t, void *, size_t *);
    kf_cl_handle (*CreateKernel) (kf_cl_handle, const char *, kf_cl_int *);
    kf_cl_int (*ReleaseKernel) (kf_cl_handle);
    kf_cl_int (*SetKernelArg) (kf_cl_handle, kf_cl_uint, size_t, const void *);
    kf_cl_int (*EnqueueNDRangeKernel) (kf_cl_handle, kf_cl_handle, kf_cl_uint, const size_t *,
                                       const size_t *, const size_t *, kf_cl_uint,
                                       const kf_cl_handle *, kf_cl_handle *);
    kf_cl_int (*Finish) (kf_cl_handle);
    kf_cl_int (*WaitForEvents) (kf_cl_uint, const kf_cl_handle *);
    kf_cl_int (*GetEventProfilingInfo) (kf_cl_handle, kf_cl_uint, size_t, void *, size_t *);
    kf_cl_int (*ReleaseEvent) (kf_cl_handle);
    void *(*EnqueueMapBuffer) (kf_cl_handle, kf_cl_handle, kf_cl_uint, kf_cl_ulong, size_t,
                               size_t, kf_cl_uint, const kf_cl_handle *, kf_cl_handle *,
                               kf_cl_int *);
    kf_cl_int (*EnqueueUnmapMemObject) (kf_cl_handle, kf_cl_handle, void *, kf_cl_uint,
                                        const kf_cl_handle *, kf_cl_handle *);
    /* OpenCL 2.1 (SPIR-V): NULL when the loader lacks it. */
    kf_cl_handle (*CreateProgramWithIL) (kf_cl_handle, const void *, size_t, kf_cl_int *);
} kf_ocl_api_t;

/* The loader's table, or NULL with WHY ("the OpenCL ICD loader is not
 * installed ..."). The library stays loaded for the process's life. */
kf_ocl_api_t *kf_ocl_api_new (char *why, size_t why_size);
void kf_ocl_api_destroy (kf_ocl_api_t **self_p);

/* The name of OpenCL status RC ("CL_BUILD_PROGRAM_FAILURE (-11)"), in a
 * static buffer overwritten by the next call. */
const char *kf_ocl_err (kf_cl_int rc);

#endif
