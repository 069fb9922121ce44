/*  kf_ocl_api.c - dlopen the OpenCL ICD loader and fill the function table.
 *
 *  The ICD loader finds the platforms (PoCL, Intel's compute runtime,
 *  NVIDIA's, ...) through /etc/OpenCL/vendors on its own; with none
 *  installed clGetPlatformIDs answers CL_PLATFORM_NOT_FOUND_KHR, and the
 *  messages are made to say which of the two is missing.
 */
#include "kf_ocl_api.h"
#include "kf_take.h"

#include "kf_dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
s_open (char *path, size_t path_size, char *why, size_t why_size)
{
    static const char *const names[] = { "libOpenCL.so.1", "libOpenCL.so", NULL };
    return kf_dlib_open ("KF_OPENCL_LIBRARY", names, RTLD_NOW | RTLD_LOCAL,
                         "the OpenCL ICD loader is not installed (libOpenCL.so.1 not "
                         "found; Debian package ocl-icd-libopencl1; or set KF_OPENCL_LIBRARY)",
                         path, path_size, why, why_size);
}

kf_ocl_api_t *
kf_ocl_api_new (char *why, size_t why_size)
{
    kf_ocl_api_t *self = calloc (1, sizeof *self);
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
        { (void **) &self->GetPlatformIDs, "clGetPlatformIDs" },
        { (void **) &self->GetPlatformInfo, "clGetPlatformInfo" },
        { (void **) &self->GetDeviceIDs, "clGetDeviceIDs" },
        { (void **) &self->GetDeviceInfo, "clGetDeviceInfo" },
        { (void **) &self->CreateContext, "clCreateContext" },
        { (void **) &self->ReleaseContext, "clReleaseContext" },
        { (void **) &self->CreateCommandQueue, "clCreateCommandQueue" },
        { (void **) &self->ReleaseCommandQueue, "clReleaseCommandQueue" },
        { (void **) &self->CreateBuffer, "clCreateBuffer" },
        { (void **) &self->CreateSubBuffer, "clCreateSubBuffer" },
        { (void **) &self->ReleaseMemObject, "clReleaseMemObject" },
        { (void **) &self->EnqueueFillBuffer, "clEnqueueFillBuffer" },
        { (void **) &self->EnqueueWriteBuffer, "clEnqueueWriteBuffer" },
        { (void **) &self->EnqueueReadBuffer, "clEnqueueReadBuffer" },
        { (void **) &self->EnqueueCopyBuffer, "clEnqueueCopyBuffer" },
        { (void **) &self->CreateProgramWithSource, "clCreateProgramWithSource" },
        { (void **) &self->BuildProgram, "clBuildProgram" },
        { (void **) &self->GetProgramBuildInfo, "clGetProgramBuildInfo" },
        { (void **) &self->ReleaseProgram, "clReleaseProgram" },
        { (void **) &self->GetProgramInfo, "clGetProgramInfo" },
        { (void **) &self->CreateKernel, "clCreateKernel" },
        { (void **) &self->ReleaseKernel, "clReleaseKernel" },
        { (void **) &self->SetKernelArg, "clSetKernelArg" },
        { (void **) &self->EnqueueNDRangeKernel, "clEnqueueNDRangeKernel" },
        { (void **) &self->Finish, "clFinish" },
        { (void **) &self->WaitForEvents, "clWaitForEvents" },
        { (void **) &self->GetEventProfilingInfo, "clGetEventProfilingInfo" },
        { (void **) &self->ReleaseEvent, "clReleaseEvent" },
        { (void **) &self->EnqueueMapBuffer, "clEnqueueMapBuffer" },
        { (void **) &self->EnqueueUnmapMemObject, "clEnqueueUnmapMemObject" },
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *fn = dlsym (lib, syms[i].name);
        if (!fn) {
            snprintf (why, why_size, "%s lacks %s (an OpenCL 1.2 loader is needed)", self->path,
                      syms[i].name);
            free (self);
            return NULL;
        }
        *syms[i].slot = fn;
    }
    //  Optional: an OpenCL 2.1 loader has it, a 1.2 one does not.
    *(void **) &self->CreateProgramWithIL = dlsym (lib, "clCreateProgramWithIL");
    return self;
}

void
kf_ocl_api_destroy (kf_ocl_api_t **self_p)
{
    free (KF_TAKE (self_p));
}

const char *
kf_ocl_err (kf_cl_int rc)
{
    static const struct { kf_cl_int rc; const char *name; } names[] = {
        { 0, "CL_SUCCESS" }, { -1, "CL_DEVICE_NOT_FOUND" }, { -2, "CL_DEVICE_NOT_AVAILABLE" },
        { -3, "CL_COMPILER_NOT_AVAILABLE" }, { -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE" },
        { -5, "CL_OUT_OF_RESOURCES" }, { -6, "CL_OUT_OF_HOST_MEMORY" },
        { -7, "CL_PROFILING_INFO_NOT_AVAILABLE" }, { -11, "CL_BUILD_PROGRAM_FAILURE" },
        { -13, "CL_MISALIGNED_SUB_BUFFER_OFFSET" },
        { -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" }, { -30, "CL_INVALID_VALUE" },
        { -33, "CL_INVALID_DEVICE" }, { -38, "CL_INVALID_MEM_OBJECT" },
        { -45, "CL_INVALID_PROGRAM_EXECUTABLE" }, { -46, "CL_INVALID_KERNEL_NAME" },
        { -48, "CL_INVALID_KERNEL" }, { -49, "CL_INVALID_ARG_INDEX" },
        { -50, "CL_INVALID_ARG_VALUE" }, { -51, "CL_INVALID_ARG_SIZE" },
        { -52, "CL_INVALID_KERNEL_ARGS" }, { -53, "CL_INVALID_WORK_DIMENSION" },
        { -54, "CL_INVALID_WORK_GROUP_SIZE" }, { -55, "CL_INVALID_WORK_ITEM_SIZE" },
        { -61, "CL_INVALID_BUFFER_SIZE" }, { -63, "CL_INVALID_GLOBAL_WORK_SIZE" },
        { -1001, "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform installed)" },
    };
    static char buf[96];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].rc == rc) {
            snprintf (buf, sizeof buf, "%s (%d)", names[i].name, (int) rc);
            return buf;
        }
    snprintf (buf, sizeof buf, "OpenCL error %d", (int) rc);
    return buf;
}
