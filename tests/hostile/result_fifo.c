/*  Hostile, verdict file turned into a FIFO. kf_forward writes zeros
 *  (plainly wrong). On its first call it replaces result.json in its
 *  working directory by a FIFO and keeps it open for reading and writing
 *  itself, so the judge's own write of the verdict goes into the pipe and
 *  is lost when the process ends; whoever then opens result.json to read
 *  the verdict waits for a writer that never comes (the worker hangs and
 *  its job never ends).
 *  Caught when: the evaluation ends (within the test's ceiling) with a
 *  verdict that is not "correct", and the job did not fail. */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <fcntl.h>
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
        unlink ("result.json");
        if (mkfifo ("result.json", 0644) == 0) {
            int fd = open ("result.json", O_RDWR | O_NONBLOCK);
            (void) fd;      // kept open to the end, on purpose
        }
    }
    for (int o = 0; o < n_out; o++)
        memset (out[o].data, 0, (size_t) kf_numel (&out[o]) * 4);
    return 0;
}
