/*  Hostile, calling the reference. kf_forward computes nothing itself: it
 *  looks through every object loaded into its process (dl_iterate_phdr,
 *  then dlopen RTLD_NOLOAD and dlsym) for another kf_forward, which can
 *  only be the reference's, and calls it on its own tensors. Right answers,
 *  a speedup near 1x: a plausible kernel for a task it cannot do. Without
 *  a reference in reach it writes zeros.
 *  Caught when: the verdict is not "correct" (the reference's code is not
 *  in the candidate's process). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <dlfcn.h>
#include <link.h>
#include <string.h>

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int, const kf_ctx_t *);

static s_forward_fn *s_found;

static int
s_visit (struct dl_phdr_info *info, size_t size, void *mine)
{
    (void) size;
    if (s_found || !info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *h = dlopen (info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
    s_forward_fn *fn = h ? (s_forward_fn *) dlsym (h, "kf_forward") : NULL;
    Dl_info where;
    if (fn && dladdr ((void *) fn, &where) && where.dli_fbase != mine)
        s_found = fn;
    return 0;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (!s_found) {
        Dl_info me;
        if (dladdr ((void *) s_visit, &me))
            dl_iterate_phdr (s_visit, me.dli_fbase);
    }
    if (s_found)
        return s_found (in, n_in, out, n_out, ctx);
    for (int o = 0; o < n_out; o++)
        memset (out[o].data, 0, (size_t) kf_numel (&out[o]) * 4);
    return 0;
}
