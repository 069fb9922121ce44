/*  kf_cuda_share.c - device memory shared through a file descriptor
 *  (kf_cuda_share.h).
 *
 *  The structures below are the driver's (cuda.h, CUDA 11.2 and later),
 *  spelled out so the worker builds without a toolkit.
 */
#include "kf_cuda_share.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define S_HANDLE_POSIX_FD 1        // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
#define S_ALLOCATION_PINNED 1      // CU_MEM_ALLOCATION_TYPE_PINNED
#define S_LOCATION_DEVICE 1        // CU_MEM_LOCATION_TYPE_DEVICE
#define S_PROT_READWRITE 3         // CU_MEM_ACCESS_FLAGS_PROT_READWRITE

typedef struct { int type, id; } s_location_t;                 // CUmemLocation
typedef struct {                                               // CUmemAllocationProp
    int type, handle_types;
    s_location_t location;
    void *win32;
    unsigned char compression, rdma;
    unsigned short usage;
    unsigned char reserved[4];
} s_prop_t;
typedef struct { s_location_t location; int flags; } s_access_t;   // CUmemAccessDesc

static void
s_prop (s_prop_t *p, int device)
{
    memset (p, 0, sizeof *p);
    p->type = S_ALLOCATION_PINNED;
    p->handle_types = S_HANDLE_POSIX_FD;
    p->location.type = S_LOCATION_DEVICE;
    p->location.id = device;
}

static int
s_fail (const kf_cuda_api_t *api, int rc, const char *what, char *why, size_t why_size)
{
    const char *name = NULL;
    if (api->DrvErrorName)
        api->DrvErrorName (rc, &name);
    snprintf (why, why_size, "%s: %s (%d)", what, name ? name : "CUDA driver error", rc);
    return -1;
}

//  Maps S->handle (S->bytes) at a fresh address readable and writable by
//  DEVICE.
static int
s_map (kf_cuda_share_t *s, int device, char *why, size_t why_size)
{
    const kf_cuda_api_t *api = s->api;
    int rc = api->MemAddressReserve (&s->base, s->bytes, 0, 0, 0);
    if (rc) {
        s->base = 0;
        return s_fail (api, rc, "cuMemAddressReserve", why, why_size);
    }
    if ((rc = api->MemMap (s->base, s->bytes, 0, s->handle, 0))) {
        api->MemAddressFree (s->base, s->bytes);
        s->base = 0;
        return s_fail (api, rc, "cuMemMap", why, why_size);
    }
    s_access_t access = { { S_LOCATION_DEVICE, device }, S_PROT_READWRITE };
    if ((rc = api->MemSetAccess (s->base, s->bytes, &access, 1)))
        return s_fail (api, rc, "cuMemSetAccess", why, why_size);
    return 0;
}

int
kf_cuda_share_new (kf_cuda_share_t *s, const kf_cuda_api_t *api, int device, size_t bytes,
                   char *why, size_t why_size)
{
    memset (s, 0, sizeof *s);
    s->api = api;
    s->fd = -1;
    if (!api->MemCreate) {
        snprintf (why, why_size, "the CUDA driver has no virtual memory management "
                  "(cuMemCreate): the candidate cannot be given a process of its own");
        return -1;
    }
    s_prop_t prop;
    s_prop (&prop, device);
    size_t gran = 0;
    int rc = api->MemGetAllocationGranularity (&gran, &prop, 0);
    if (rc || gran == 0)
        return s_fail (api, rc, "cuMemGetAllocationGranularity", why, why_size);
    s->bytes = (bytes + gran - 1) / gran * gran;
    if (s->bytes == 0)
        s->bytes = gran;
    if ((rc = api->MemCreate (&s->handle, s->bytes, &prop, 0))) {
        s->handle = 0;
        return s_fail (api, rc, "cuMemCreate", why, why_size);
    }
    if (s_map (s, device, why, why_size))
        return -1;
    int fd = -1;
    if ((rc = api->MemExportToShareableHandle (&fd, s->handle, S_HANDLE_POSIX_FD, 0)))
        return s_fail (api, rc, "cuMemExportToShareableHandle", why, why_size);
    s->fd = fd;
    return 0;
}

int
kf_cuda_share_import (kf_cuda_share_t *s, const kf_cuda_api_t *api, int device, int fd,
                      size_t bytes, char *why, size_t why_size)
{
    memset (s, 0, sizeof *s);
    s->api = api;
    s->fd = fd;
    s->bytes = bytes;
    if (!api->MemImportFromShareableHandle) {
        snprintf (why, why_size, "the CUDA driver has no virtual memory management");
        return -1;
    }
    int rc = api->MemImportFromShareableHandle (&s->handle, (void *) (intptr_t) fd,
                                                S_HANDLE_POSIX_FD);
    if (rc) {
        s->handle = 0;
        return s_fail (api, rc, "cuMemImportFromShareableHandle", why, why_size);
    }
    return s_map (s, device, why, why_size);
}

void
kf_cuda_share_free (kf_cuda_share_t *s)
{
    if (!s || !s->api)
        return;
    if (s->base) {
        s->api->MemUnmap (s->base, s->bytes);
        s->api->MemAddressFree (s->base, s->bytes);
    }
    if (s->handle)
        s->api->MemRelease (s->handle);
    if (s->fd >= 0)
        close (s->fd);
    memset (s, 0, sizeof *s);
    s->fd = -1;
}
