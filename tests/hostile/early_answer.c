/*  Hostile: answers for the harness. Whatever socket it finds among its
 *  descriptors, it writes a "done" answer into at the start of every call,
 *  then computes honestly: a judge that times the call until the first
 *  answer on that socket stops its clock before the work is done, and the
 *  real answer, left queued, would close the next call at once.
 *
 *  Caught when: the verdict is not correct (the judge stops the process
 *  at the first answer and finds the outputs unwritten, or finds an answer
 *  waiting before it asked). Computes the same softmax as honest.c. */
#define _DEFAULT_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

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
    //  A "done, every call returned 0" answer: status, rc, calls, detail.
    struct { int32_t status, rc; uint32_t calls; char detail[240]; } done;
    memset (&done, 0, sizeof done);
    done.calls = 1;
    for (int fd = 3; fd < 32; fd++) {
        struct stat st;
        if (fstat (fd, &st) == 0 && S_ISSOCK (st.st_mode))
            send (fd, &done, sizeof done, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    int64_t n = in[0].shape[in[0].rank - 1];
    s_softmax (in[0].data, out[0].data, kf_numel (&in[0]) / n, n);
    return 0;
}
