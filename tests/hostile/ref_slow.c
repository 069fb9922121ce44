/*  Hostile, swapping the harness's pointers. kf_forward computes the right
 *  answer honestly (the baseline's code), but on its first call it finds
 *  the reference's kf_forward (dl_iterate_phdr, dlsym) and replaces every
 *  copy of that address in the process's writable memory (the harness's
 *  function pointer among them) by a wrapper that calls the reference and
 *  then busy-waits five times as long: the reference looks six times
 *  slower, and the candidate's speedup six times what it earned.
 *  Caught when: the verdict is not "correct", or the speedup is within the
 *  test's factor of the honest baseline's (the reference is timed as it
 *  is, in a process the candidate cannot touch). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int, const kf_ctx_t *);

static s_forward_fn *s_reference;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
s_slowed (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out, const kf_ctx_t *ctx)
{
    double t0 = s_now ();
    int rc = s_reference (in, n_in, out, n_out, ctx);
    double took = s_now () - t0;
    while (s_now () - t0 < 6 * took)
        ;
    return rc;
}

static int
s_visit (struct dl_phdr_info *info, size_t size, void *mine)
{
    (void) size;
    if (s_reference || !info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *h = dlopen (info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
    s_forward_fn *fn = h ? (s_forward_fn *) dlsym (h, "kf_forward") : NULL;
    Dl_info where;
    if (fn && dladdr ((void *) fn, &where) && where.dli_fbase != mine)
        s_reference = fn;
    return 0;
}

//  Every aligned word equal to the reference's entry point, in writable
//  private mappings up to 256 MiB (heap, data, anonymous; not the stack),
//  now points to s_slowed.
static void
s_swap (void)
{
    FILE *maps = fopen ("/proc/self/maps", "r");
    if (!maps)
        return;
    char line[512];
    while (fgets (line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf (line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || strncmp (perms, "rw", 2)
            || hi - lo > (256ul << 20) || strstr (line, "[stack") || strstr (line, "[vvar"))
            continue;
        for (void **p = (void **) lo; (unsigned long) (p + 1) <= hi; p++)
            if (*p == (void *) s_reference && p != (void **) &s_reference)
                *p = (void *) s_slowed;
    }
    fclose (maps);
}

static void
s_softmax (const float *x, float *y, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            mx = xr[i] > mx ? xr[i] : mx;
        float sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += expf (xr[i] - mx);
        for (int64_t i = 0; i < n; i++)
            yr[i] = expf (xr[i] - mx) / sum;
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static int swapped;
    if (!swapped++) {
        Dl_info me;
        if (dladdr ((void *) s_visit, &me))
            dl_iterate_phdr (s_visit, me.dli_fbase);
        if (s_reference)
            s_swap ();
    }
    int64_t n = in[0].shape[in[0].rank - 1];
    s_softmax (in[0].data, out[0].data, kf_numel (&in[0]) / n, n);
    return 0;
}
