/*  kf_ze_device.c - the Level Zero device (kf_ze_eval.h): the loader
 *  loaded and the GPU found, its context, compute queue and the one
 *  command list every operation reuses, host-visible staging for copies,
 *  the measured copy bandwidth, and the worker's probe that describes the
 *  GPU for its capabilities.
 */
#include "kf_ze_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_COPY_BYTES ((size_t) 256 << 20)

//  The device this process opened.
kf_ze_dev_t kf_ze_dev;

const char *
kf_ze_err (uint32_t rc)
{
    static char buf[96];
    return kf_ze_api_error (rc, buf, sizeof buf);
}

//  Loads the loader and finds GPU DEVICE; WHY starts "no Level Zero
//  device: " whenever there is none to use.
int
kf_ze_find_device (int device, char *why, size_t why_size)
{
    char reason[400];
    if (!kf_ze_dev.api)
        kf_ze_dev.api = kf_ze_api_new (reason, sizeof reason);
    if (!kf_ze_dev.api) {
        snprintf (why, why_size, "no Level Zero device: %s", reason);
        return -1;
    }
    kf_ze_handle_t drivers[64], devices[64];
    int gpus = kf_ze_api_gpus (kf_ze_dev.api, drivers, devices, 64, reason, sizeof reason);
    if (gpus <= 0) {
        //  Nothing is kept from a probe that found nothing: the next one
        //  looks again (another KF_ZE_LOADER, a driver installed since).
        snprintf (why, why_size, "no Level Zero device: %s", reason);
        kf_ze_api_destroy (&kf_ze_dev.api);
        return -1;
    }
    if (device < 0 || device >= gpus || device >= 64) {
        snprintf (why, why_size, "no Level Zero device: device %d requested, %d present",
                  device, gpus);
        return -1;
    }
    kf_ze_dev.gpus = gpus;
    kf_ze_dev.driver = drivers[device];
    kf_ze_dev.device = devices[device];
    memset (&kf_ze_dev.props, 0, sizeof kf_ze_dev.props);
    kf_ze_dev.props.stype = KF_ZE_STYPE_DEVICE_PROPERTIES;
    memset (&kf_ze_dev.compute, 0, sizeof kf_ze_dev.compute);
    kf_ze_dev.compute.stype = KF_ZE_STYPE_DEVICE_COMPUTE_PROPERTIES;
    uint32_t rc = kf_ze_dev.api->DeviceGetProperties (kf_ze_dev.device, &kf_ze_dev.props);
    if (!rc)
        rc = kf_ze_dev.api->DeviceGetComputeProperties (kf_ze_dev.device, &kf_ze_dev.compute);
    if (rc) {
        snprintf (why, why_size, "no Level Zero device: device properties: %s", kf_ze_err (rc));
        return -1;
    }
    //  Memory and caches: the largest of each kind the device reports.
    kf_ze_device_memory_properties_t mem[4];
    uint32_t n = 4;
    memset (mem, 0, sizeof mem);
    for (int i = 0; i < 4; i++)
        mem[i].stype = KF_ZE_STYPE_DEVICE_MEMORY_PROPERTIES;
    kf_ze_dev.memory_bytes = 0;
    if (kf_ze_dev.api->DeviceGetMemoryProperties (kf_ze_dev.device, &n, mem) == KF_ZE_SUCCESS)
        for (uint32_t i = 0; i < n && i < 4; i++)
            kf_ze_dev.memory_bytes += mem[i].totalSize;
    kf_ze_device_cache_properties_t cache[4];
    n = 4;
    memset (cache, 0, sizeof cache);
    for (int i = 0; i < 4; i++)
        cache[i].stype = KF_ZE_STYPE_DEVICE_CACHE_PROPERTIES;
    kf_ze_dev.cache_bytes = 0;
    if (kf_ze_dev.api->DeviceGetCacheProperties (kf_ze_dev.device, &n, cache) == KF_ZE_SUCCESS)
        for (uint32_t i = 0; i < n && i < 4; i++)
            if (cache[i].cacheSize > kf_ze_dev.cache_bytes)
                kf_ze_dev.cache_bytes = cache[i].cacheSize;
    return 0;
}

//  A context, the first compute queue group's queue, and one command
//  list that every operation of this process reuses.
int
kf_ze_open_queue (char *why, size_t why_size)
{
    kf_ze_command_queue_group_properties_t groups[8];
    uint32_t n = 8, ordinal = 0;
    memset (groups, 0, sizeof groups);
    for (int i = 0; i < 8; i++)
        groups[i].stype = KF_ZE_STYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    if (kf_ze_dev.api->DeviceGetCommandQueueGroupProperties (kf_ze_dev.device, &n, groups) == KF_ZE_SUCCESS)
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
    uint32_t rc = kf_ze_dev.api->ContextCreate (kf_ze_dev.driver, &cdesc, &kf_ze_dev.context);
    if (!rc)
        rc = kf_ze_dev.api->CommandQueueCreate (kf_ze_dev.context, kf_ze_dev.device, &qdesc, &kf_ze_dev.queue);
    if (!rc)
        rc = kf_ze_dev.api->CommandListCreate (kf_ze_dev.context, kf_ze_dev.device, &ldesc, &kf_ze_dev.list);
    if (rc) {
        snprintf (why, why_size, "context and command queue: %s", kf_ze_err (rc));
        return -1;
    }
    return 0;
}

//  Runs what was appended to the list and waits for it; the list is
//  empty again afterwards. A kernel fault shows here (DEVICE_LOST).
uint32_t
kf_ze_submit (void)
{
    uint32_t rc = kf_ze_dev.api->CommandListClose (kf_ze_dev.list);
    if (!rc)
        rc = kf_ze_dev.api->CommandQueueExecuteCommandLists (kf_ze_dev.queue, 1, &kf_ze_dev.list, NULL);
    if (!rc)
        rc = kf_ze_dev.api->CommandQueueSynchronize (kf_ze_dev.queue, UINT64_MAX);
    uint32_t reset = kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
    return rc ? rc : reset;
}

//  Device ticks between two global timestamps, in nanoseconds.
double
kf_ze_ticks_ns (uint64_t t0, uint64_t t1)
{
    uint32_t bits = kf_ze_dev.props.timestampValidBits;
    uint64_t mask = bits > 0 && bits < 64 ? (((uint64_t) 1 << bits) - 1) : UINT64_MAX;
    uint64_t ticks = (t1 - t0) & mask;
    double res = kf_ze_dev.props.timerResolution ? (double) kf_ze_dev.props.timerResolution : 1;
    return (double) ticks * res;
}

// --------------------------------------------------------------------------
//  Host-visible staging: device memory is reached by copies from memory
//  the device can read, which plain malloc'd memory need not be.

kf_ze_stage_t kf_ze_stage;

uint32_t
kf_ze_stage_reserve (size_t bytes)
{
    if (kf_ze_stage.size >= bytes && kf_ze_stage.stamps)
        return 0;
    kf_ze_host_mem_alloc_desc_t desc = { .stype = KF_ZE_STYPE_HOST_MEM_ALLOC_DESC };
    uint32_t rc = 0;
    if (!kf_ze_stage.stamps)
        rc = kf_ze_dev.api->MemAllocHost (kf_ze_dev.context, &desc, 64, 64, (void **) &kf_ze_stage.stamps);
    if (!rc && kf_ze_stage.size < bytes) {
        if (kf_ze_stage.host)
            kf_ze_dev.api->MemFree (kf_ze_dev.context, kf_ze_stage.host);
        kf_ze_stage.host = NULL;
        kf_ze_stage.size = 0;
        rc = kf_ze_dev.api->MemAllocHost (kf_ze_dev.context, &desc, bytes, 64, (void **) &kf_ze_stage.host);
        if (!rc)
            kf_ze_stage.size = bytes;
    }
    return rc;
}

uint32_t
kf_ze_upload (void *dst, const void *src, size_t bytes)
{
    uint32_t rc = kf_ze_stage_reserve (bytes);
    if (rc)
        return rc;
    memcpy (kf_ze_stage.host, src, bytes);
    rc = kf_ze_dev.api->CommandListAppendMemoryCopy (kf_ze_dev.list, dst, kf_ze_stage.host, bytes, NULL, 0, NULL);
    return rc ? rc : kf_ze_submit ();
}

uint32_t
kf_ze_download (void *dst, const void *src, size_t bytes)
{
    uint32_t rc = kf_ze_stage_reserve (bytes);
    if (!rc)
        rc = kf_ze_dev.api->CommandListAppendMemoryCopy (kf_ze_dev.list, kf_ze_stage.host, src, bytes,
                                                    NULL, 0, NULL);
    if (!rc)
        rc = kf_ze_submit ();
    if (!rc)
        memcpy (dst, kf_ze_stage.host, bytes);
    return rc;
}

uint32_t
kf_ze_device_alloc (void **ptr, size_t bytes)
{
    kf_ze_device_mem_alloc_desc_t desc = { .stype = KF_ZE_STYPE_DEVICE_MEM_ALLOC_DESC };
    *ptr = NULL;
    return kf_ze_dev.api->MemAllocDevice (kf_ze_dev.context, &desc, bytes ? bytes : 1, 256, kf_ze_dev.device, ptr);
}

// --------------------------------------------------------------------------
//  Device memory bandwidth: ten device-to-device copies of 256 MiB
//  between two global timestamps, bytes read plus bytes written, as for
//  the CUDA backend.

int
kf_ze_copy_bandwidth (double *gbs, char *why, size_t why_size)
{
    void *a = NULL, *b = NULL;
    const int reps = 10;
    unsigned char one = 1;
    uint32_t rc = kf_ze_device_alloc (&a, S_COPY_BYTES);
    if (!rc) rc = kf_ze_device_alloc (&b, S_COPY_BYTES);
    if (!rc) rc = kf_ze_stage_reserve (64);
    if (!rc) rc = kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, a, &one, 1, S_COPY_BYTES,
                                                         NULL, 0, NULL);
    if (!rc) rc = kf_ze_dev.api->CommandListAppendBarrier (kf_ze_dev.list, NULL, 0, NULL);
    if (!rc) rc = kf_ze_dev.api->CommandListAppendWriteGlobalTimestamp (kf_ze_dev.list, &kf_ze_stage.stamps[0],
                                                                   NULL, 0, NULL);
    for (int k = 0; k < reps && !rc; k++) {
        rc = kf_ze_dev.api->CommandListAppendMemoryCopy (kf_ze_dev.list, b, a, S_COPY_BYTES, NULL, 0, NULL);
        if (!rc) rc = kf_ze_dev.api->CommandListAppendBarrier (kf_ze_dev.list, NULL, 0, NULL);
    }
    if (!rc) rc = kf_ze_dev.api->CommandListAppendWriteGlobalTimestamp (kf_ze_dev.list, &kf_ze_stage.stamps[1],
                                                                   NULL, 0, NULL);
    if (!rc) rc = kf_ze_submit ();
    if (rc)
        snprintf (why, why_size, "copy bandwidth: %s", kf_ze_err (rc));
    else {
        double ns = kf_ze_ticks_ns (kf_ze_stage.stamps[0], kf_ze_stage.stamps[1]);
        *gbs = ns > 0 ? 2.0 * (double) S_COPY_BYTES * reps / ns : 0;
    }
    if (a) kf_ze_dev.api->MemFree (kf_ze_dev.context, a);
    if (b) kf_ze_dev.api->MemFree (kf_ze_dev.context, b);
    return rc ? -1 : 0;
}

json_t *
kf_ze_probe (int device, char *why, size_t why_size)
{
    if (kf_ze_find_device (device, why, why_size))
        return NULL;
    char reason[400];
    double gbs = 0;
    if (kf_ze_open_queue (reason, sizeof reason) || kf_ze_copy_bandwidth (&gbs, reason, sizeof reason)) {
        snprintf (why, why_size, "no Level Zero device: %s", reason);
        return NULL;
    }
    const kf_ze_device_properties_t *p = &kf_ze_dev.props;
    json_t *dev = json_pack (
        "{s:i, s:s, s:i, s:i, s:I, s:i, s:i, s:I, s:I, s:f, s:I, s:s}",
        "index", device, "name", p->name, "vendor_id", (int) p->vendorId,
        "device_id", (int) p->deviceId, "memory_bytes", (json_int_t) kf_ze_dev.memory_bytes,
        "execution_units", (int) (p->numSlices * p->numSubslicesPerSlice * p->numEUsPerSubslice),
        "max_group_size", (int) kf_ze_dev.compute.maxTotalGroupSize,
        "cache_bytes", (json_int_t) kf_ze_dev.cache_bytes,
        "timer_resolution_ns", (json_int_t) p->timerResolution,
        "copy_bandwidth_gbs", round (gbs * 10) / 10,
        "core_clock_mhz", (json_int_t) p->coreClockRate, "loader", kf_ze_dev.api->path);
    //  The parent only describes the device; every evaluation child opens
    //  its own context.
    if (kf_ze_stage.host)
        kf_ze_dev.api->MemFree (kf_ze_dev.context, kf_ze_stage.host);
    if (kf_ze_stage.stamps)
        kf_ze_dev.api->MemFree (kf_ze_dev.context, kf_ze_stage.stamps);
    kf_ze_dev.api->CommandListDestroy (kf_ze_dev.list);
    kf_ze_dev.api->CommandQueueDestroy (kf_ze_dev.queue);
    kf_ze_dev.api->ContextDestroy (kf_ze_dev.context);
    kf_ze_dev.list = kf_ze_dev.queue = kf_ze_dev.context = NULL;
    memset (&kf_ze_stage, 0, sizeof kf_ze_stage);
    //  SPIR-V is the device code whatever the GPU: the compile worker
    //  builds one artifact for every Level Zero device.
    return json_pack ("{s:s, s:[o]}", "arch", "spir64", "devices", dev);
}
