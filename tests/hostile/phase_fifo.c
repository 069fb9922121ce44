/*  Hostile, phase file turned into a FIFO. kf_forward writes zeros
 *  (plainly wrong). On its first call it replaces the file "phase" in its
 *  working directory (the byte that tells the worker whose code was running
 *  when the evaluating process died) by a FIFO: the process keeps its old
 *  mapping, but whoever opens "phase" afterwards to read it waits for a
 *  writer that never comes (the worker hangs and its job never ends).
 *  Caught when: the evaluation ends (within the test's ceiling) with a
 *  verdict that is not "correct", and the job did not fail. */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) ctx;
    static int planted;
    if (!planted++) {
        unlink ("phase");
        mkfifo ("phase", 0644);
    }
    for (int o = 0; o < n_out; o++)
        memset (out[o].data, 0, (size_t) kf_numel (&out[o]) * 4);
    return 0;
}
