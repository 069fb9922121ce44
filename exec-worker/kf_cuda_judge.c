/*  kf_cuda_judge.c - loading and calling the judge's device kernels.
 *
 *  See kf_cuda_judge.h. Grids are at most S_BLOCKS blocks of S_THREADS
 *  threads; a comparison's per-block figures (72 bytes each) are read
 *  back and merged here in block order, so the figures are the same for
 *  the same tensors on the same device.
 */
#include "kf_cuda_judge.h"
#include "kf_take.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_THREADS 256           // KF_JUDGE_THREADS in kf_cuda_judge.cu
#define S_BLOCKS 1024

//  The fat binary the Makefile embeds (size 0: built without nvcc).
extern const unsigned char kf_cuda_judge_image[];
extern const size_t kf_cuda_judge_image_size;

struct kf_cuda_judge {
    kf_cuda_api_t *api;
    void *module, *fill, *compare, *differ;
    kf_elem_part_t *parts_d;        // S_BLOCKS of them
    unsigned long long *count_d;
    kf_elem_part_t parts[S_BLOCKS];
};

kf_cuda_judge_t *
kf_cuda_judge_new (kf_cuda_api_t *api, char *why, size_t why_size)
{
    if (kf_cuda_judge_image_size == 0) {
        snprintf (why, why_size, "this exec worker was built without nvcc, so it has no "
                  "device checks; build it where the CUDA toolkit is installed");
        return NULL;
    }
    if (!api->ModuleLoadData) {
        snprintf (why, why_size, "the driver library (libcuda.so.1) lacks the module API");
        return NULL;
    }
    kf_cuda_judge_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    self->api = api;
    const char *step = "loading its kernels";
    int rc = api->ModuleLoadData (&self->module, kf_cuda_judge_image);
    if (!rc) rc = api->ModuleGetFunction (&self->fill, self->module, "kf_judge_fill");
    if (!rc) rc = api->ModuleGetFunction (&self->compare, self->module, "kf_judge_compare");
    if (!rc) rc = api->ModuleGetFunction (&self->differ, self->module, "kf_judge_differ");
    if (!rc) {
        step = "allocating its figures";
        rc = api->Malloc ((void **) &self->parts_d, sizeof self->parts);
        if (!rc) rc = api->Malloc ((void **) &self->count_d, sizeof *self->count_d);
    }
    if (rc) {
        //  Driver API codes: 222 is CUDA_ERROR_UNSUPPORTED_PTX_VERSION, an
        //  image built by an nvcc newer than the driver.
        snprintf (why, why_size, "device checks: %s: CUDA error %d%s", step, rc,
                  rc == 222 ? " (the driver is older than the nvcc this worker was built with)" : "");
        kf_cuda_judge_destroy (&self);
        return NULL;
    }
    return self;
}

void
kf_cuda_judge_destroy (kf_cuda_judge_t **self_p)
{
    kf_cuda_judge_t *self = KF_TAKE (self_p);
    if (self) {
        if (self->parts_d) self->api->Free (self->parts_d);
        if (self->count_d) self->api->Free (self->count_d);
        if (self->module) self->api->ModuleUnload (self->module);
        free (self);
    }
}

static unsigned
s_blocks (size_t n)
{
    size_t b = (n + S_THREADS - 1) / S_THREADS;
    return b < 1 ? 1 : b > S_BLOCKS ? S_BLOCKS : (unsigned) b;
}

//  Launches FN over N elements and waits for it.
static int
s_launch (kf_cuda_judge_t *self, void *fn, size_t n, void **params)
{
    int rc = self->api->LaunchKernel (fn, s_blocks (n), 1, 1, S_THREADS, 1, 1, 0, NULL,
                                      params, NULL);
    return rc ? rc : self->api->DeviceSynchronize ();
}

int
kf_cuda_judge_fill (kf_cuda_judge_t *self, const kf_elem_dist_t *d, int dtype, void *p,
                    size_t n, uint64_t seed)
{
    unsigned long long nn = n, s = seed;
    kf_elem_dist_t dist = *d;
    void *params[] = { &p, &nn, &dtype, &dist, &s };
    return n ? s_launch (self, self->fill, n, params) : 0;
}

int
kf_cuda_judge_compare (kf_cuda_judge_t *self, int dtype, const void *c, const void *ref,
                       size_t n, double rtol, double atol, kf_elem_part_t *sum)
{
    memset (sum, 0, sizeof *sum);
    if (n == 0)
        return 0;
    unsigned long long nn = n;
    void *params[] = { &c, &ref, &nn, &dtype, &rtol, &atol, &self->parts_d };
    int rc = s_launch (self, self->compare, n, params);
    unsigned blocks = s_blocks (n);
    if (!rc)
        rc = self->api->Memcpy (self->parts, self->parts_d, blocks * sizeof *self->parts,
                                KF_CUDA_D2H);
    for (unsigned b = 0; b < blocks && !rc; b++)
        kf_elem_merge (sum, &self->parts[b]);
    return rc;
}

int
kf_cuda_judge_differ (kf_cuda_judge_t *self, const void *a, const void *b, size_t bytes,
                      uint64_t *differing)
{
    unsigned long long count = 0, nn = bytes;
    *differing = 0;
    if (bytes == 0)
        return 0;
    int rc = self->api->Memset (self->count_d, 0, sizeof count);
    void *params[] = { &a, &b, &nn, &self->count_d };
    if (!rc) rc = s_launch (self, self->differ, bytes / 8 + 1, params);
    if (!rc) rc = self->api->Memcpy (&count, self->count_d, sizeof count, KF_CUDA_D2H);
    *differing = count;
    return rc;
}
