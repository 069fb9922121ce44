/*  kf_ze_api.h - the Level Zero loader, loaded when it is asked for.
 *
 *  The exec worker must start, and serve the host and CUDA backends, on
 *  machines with no Level Zero loader and no Intel GPU, so nothing links
 *  against libze_loader: kf_ze_api_new() dlopens it and looks up the core
 *  functions the level-zero backend uses into this table.
 *
 *  No Level Zero header is needed to build: the few descriptor structs
 *  and constants used are written out below from the Level Zero 1.x
 *  specification (ze_api.h), prefix and field order kept, so the worker
 *  builds on hosts without libze-dev (the GPU machines among them).
 *  tests/unit/test_ze.c compares every size and offset with the real
 *  header where libze-dev is installed.
 */
#ifndef KF_ZE_API_H
#define KF_ZE_API_H

#include <stddef.h>
#include <stdint.h>

#define KF_ZE_SUCCESS 0
#define KF_ZE_NOT_READY 1
#define KF_ZE_ERROR_DEVICE_LOST 0x70000001
#define KF_ZE_ERROR_OUT_OF_DEVICE_MEMORY 0x70000003
#define KF_ZE_ERROR_MODULE_BUILD_FAILURE 0x70000004
#define KF_ZE_ERROR_UNINITIALIZED 0x78000001
#define KF_ZE_INIT_FLAG_GPU_ONLY 1
#define KF_ZE_DEVICE_TYPE_GPU 1
#define KF_ZE_MODULE_FORMAT_IL_SPIRV 0
#define KF_ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS 2
#define KF_ZE_COMMAND_QUEUE_GROUP_FLAG_COMPUTE 1

/* ze_structure_type_t values */
#define KF_ZE_STYPE_DEVICE_PROPERTIES 0x3
#define KF_ZE_STYPE_DEVICE_COMPUTE_PROPERTIES 0x4
#define KF_ZE_STYPE_COMMAND_QUEUE_GROUP_PROPERTIES 0x6
#define KF_ZE_STYPE_DEVICE_MEMORY_PROPERTIES 0x7
#define KF_ZE_STYPE_DEVICE_CACHE_PROPERTIES 0x9
#define KF_ZE_STYPE_CONTEXT_DESC 0xd
#define KF_ZE_STYPE_COMMAND_QUEUE_DESC 0xe
#define KF_ZE_STYPE_COMMAND_LIST_DESC 0xf
#define KF_ZE_STYPE_DEVICE_MEM_ALLOC_DESC 0x15
#define KF_ZE_STYPE_HOST_MEM_ALLOC_DESC 0x16
#define KF_ZE_STYPE_MODULE_DESC 0x1b
#define KF_ZE_STYPE_KERNEL_DESC 0x1d

typedef struct {                      /* ze_device_properties_t */
    uint32_t stype;
    const void *pNext;
    uint32_t type;
    uint32_t vendorId, deviceId, flags, subdeviceId, coreClockRate;
    uint64_t maxMemAllocSize;
    uint32_t maxHardwareContexts, maxCommandQueuePriority, numThreadsPerEU,
             physicalEUSimdWidth, numEUsPerSubslice, numSubslicesPerSlice, numSlices;
    uint64_t timerResolution;         /* ns per tick with this stype */
    uint32_t timestampValidBits, kernelTimestampValidBits;
    uint8_t uuid[16];
    char name[256];
} kf_ze_device_properties_t;

typedef struct {                      /* ze_device_compute_properties_t */
    uint32_t stype;
    const void *pNext;
    uint32_t maxTotalGroupSize, maxGroupSizeX, maxGroupSizeY, maxGroupSizeZ,
             maxGroupCountX, maxGroupCountY, maxGroupCountZ, maxSharedLocalMemory,
             numSubGroupSizes, subGroupSizes[8];
} kf_ze_device_compute_properties_t;

typedef struct {                      /* ze_device_memory_properties_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags, maxClockRate, maxBusWidth;
    uint64_t totalSize;
    char name[256];
} kf_ze_device_memory_properties_t;

typedef struct {                      /* ze_device_cache_properties_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags;
    size_t cacheSize;
} kf_ze_device_cache_properties_t;

typedef struct {                      /* ze_command_queue_group_properties_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags;
    size_t maxMemoryFillPatternSize;
    uint32_t numQueues;
} kf_ze_command_queue_group_properties_t;

typedef struct {                      /* ze_context_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags;
} kf_ze_context_desc_t;

typedef struct {                      /* ze_command_queue_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t ordinal, index, flags, mode, priority;
} kf_ze_command_queue_desc_t;

typedef struct {                      /* ze_command_list_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t commandQueueGroupOrdinal, flags;
} kf_ze_command_list_desc_t;

typedef struct {                      /* ze_device_mem_alloc_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags, ordinal;
} kf_ze_device_mem_alloc_desc_t;

typedef struct {                      /* ze_host_mem_alloc_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags;
} kf_ze_host_mem_alloc_desc_t;

typedef struct {                      /* ze_module_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t format;
    size_t inputSize;
    const uint8_t *pInputModule;
    const char *pBuildFlags;
    const void *pConstants;
} kf_ze_module_desc_t;

typedef struct {                      /* ze_kernel_desc_t */
    uint32_t stype;
    const void *pNext;
    uint32_t flags;
    const char *pKernelName;
} kf_ze_kernel_desc_t;

typedef struct {                      /* ze_group_count_t */
    uint32_t groupCountX, groupCountY, groupCountZ;
} kf_ze_group_count_t;

/* Handles are opaque pointers; results are ze_result_t (uint32_t). */
typedef void *kf_ze_handle_t;

typedef struct {
    char path[256];                   /* the library that was loaded */
    uint32_t (*Init) (uint32_t flags);
    uint32_t (*DriverGet) (uint32_t *count, kf_ze_handle_t *drivers);
    uint32_t (*DeviceGet) (kf_ze_handle_t driver, uint32_t *count, kf_ze_handle_t *devices);
    uint32_t (*DeviceGetProperties) (kf_ze_handle_t device, kf_ze_device_properties_t *p);
    uint32_t (*DeviceGetComputeProperties) (kf_ze_handle_t device,
                                            kf_ze_device_compute_properties_t *p);
    uint32_t (*DeviceGetMemoryProperties) (kf_ze_handle_t device, uint32_t *count,
                                           kf_ze_device_memory_properties_t *p);
    uint32_t (*DeviceGetCacheProperties) (kf_ze_handle_t device, uint32_t *count,
                                          kf_ze_device_cache_properties_t *p);
    uint32_t (*DeviceGetCommandQueueGroupProperties) (
        kf_ze_handle_t device, uint32_t *count, kf_ze_command_queue_group_properties_t *p);
    uint32_t (*ContextCreate) (kf_ze_handle_t driver, const kf_ze_context_desc_t *desc,
                               kf_ze_handle_t *context);
    uint32_t (*ContextDestroy) (kf_ze_handle_t context);
    uint32_t (*CommandQueueCreate) (kf_ze_handle_t context, kf_ze_handle_t device,
                                    const kf_ze_command_queue_desc_t *desc,
                                    kf_ze_handle_t *queue);
    uint32_t (*CommandQueueDestroy) (kf_ze_handle_t queue);
    uint32_t (*CommandQueueExecuteCommandLists) (kf_ze_handle_t queue, uint32_t n,
                                                 kf_ze_handle_t *lists, kf_ze_handle_t fence);
    uint32_t (*CommandQueueSynchronize) (kf_ze_handle_t queue, uint64_t timeout_ns);
    uint32_t (*CommandListCreate) (kf_ze_handle_t context, kf_ze_handle_t device,
                                   const kf_ze_command_list_desc_t *desc,
                                   kf_ze_handle_t *list);
    uint32_t (*CommandListDestroy) (kf_ze_handle_t list);
    uint32_t (*CommandListClose) (kf_ze_handle_t list);
    uint32_t (*CommandListReset) (kf_ze_handle_t list);
    uint32_t (*CommandListAppendLaunchKernel) (kf_ze_handle_t list, kf_ze_handle_t kernel,
                                               const kf_ze_group_count_t *groups,
                                               kf_ze_handle_t signal, uint32_t n_wait,
                                               kf_ze_handle_t *wait);
    uint32_t (*CommandListAppendBarrier) (kf_ze_handle_t list, kf_ze_handle_t signal,
                                          uint32_t n_wait, kf_ze_handle_t *wait);
    uint32_t (*CommandListAppendMemoryCopy) (kf_ze_handle_t list, void *dst, const void *src,
                                             size_t size, kf_ze_handle_t signal,
                                             uint32_t n_wait, kf_ze_handle_t *wait);
    uint32_t (*CommandListAppendMemoryFill) (kf_ze_handle_t list, void *ptr,
                                             const void *pattern, size_t pattern_size,
                                             size_t size, kf_ze_handle_t signal,
                                             uint32_t n_wait, kf_ze_handle_t *wait);
    uint32_t (*CommandListAppendWriteGlobalTimestamp) (kf_ze_handle_t list, uint64_t *dst,
                                                       kf_ze_handle_t signal, uint32_t n_wait,
                                                       kf_ze_handle_t *wait);
    uint32_t (*MemAllocDevice) (kf_ze_handle_t context, const kf_ze_device_mem_alloc_desc_t *desc,
                                size_t size, size_t alignment, kf_ze_handle_t device,
                                void **ptr);
    uint32_t (*MemAllocHost) (kf_ze_handle_t context, const kf_ze_host_mem_alloc_desc_t *desc,
                              size_t size, size_t alignment, void **ptr);
    uint32_t (*MemFree) (kf_ze_handle_t context, void *ptr);
    uint32_t (*ModuleCreate) (kf_ze_handle_t context, kf_ze_handle_t device,
                              const kf_ze_module_desc_t *desc, kf_ze_handle_t *module,
                              kf_ze_handle_t *build_log);
    uint32_t (*ModuleDestroy) (kf_ze_handle_t module);
    uint32_t (*ModuleBuildLogGetString) (kf_ze_handle_t log, size_t *size, char *text);
    uint32_t (*ModuleBuildLogDestroy) (kf_ze_handle_t log);
    uint32_t (*KernelCreate) (kf_ze_handle_t module, const kf_ze_kernel_desc_t *desc,
                              kf_ze_handle_t *kernel);
    uint32_t (*KernelDestroy) (kf_ze_handle_t kernel);
    uint32_t (*KernelSetGroupSize) (kf_ze_handle_t kernel, uint32_t x, uint32_t y, uint32_t z);
    uint32_t (*KernelSetArgumentValue) (kf_ze_handle_t kernel, uint32_t index, size_t size,
                                        const void *value);
} kf_ze_api_t;

/* Loads the Level Zero loader (KF_ZE_LOADER names a file to use instead;
 * otherwise libze_loader.so.1, then libze_loader.so, on the loader's
 * path) and looks up every function. Returns NULL with WHY (one line)
 * when the library or a function is missing. The library stays loaded
 * for the life of the process. */
kf_ze_api_t *kf_ze_api_new (char *why, size_t why_size);
void kf_ze_api_destroy (kf_ze_api_t **self_p);

/* The GPU devices of every driver, in driver order: zeInit, then
 * zeDriverGet and zeDeviceGet. Fills at most MAX handles (DRIVERS[i] is
 * the driver of DEVICES[i]) and returns how many GPUs there are, or -1
 * with WHY ("zeInit: ZE_RESULT_ERROR_UNINITIALIZED (0x78000001): no
 * Level Zero driver found" and the like). */
int kf_ze_api_gpus (kf_ze_api_t *self, kf_ze_handle_t *drivers, kf_ze_handle_t *devices,
                    int max, char *why, size_t why_size);

/* The name of result RC ("ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)"),
 * into BUF. Returns BUF. */
const char *kf_ze_api_error (uint32_t rc, char *buf, size_t size);

#endif
