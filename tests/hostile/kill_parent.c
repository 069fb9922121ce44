/*  Hostile, striking at the judge (not in issue 12's list; escaping). On
 *  its first call kf_forward sends SIGKILL to its parent process - whatever
 *  started it, which today is the worker itself - and then writes zeros
 *  (plainly wrong). Where the candidate shares a uid with the process that
 *  started it (a worker not running as root), the job would end with no
 *  verdict at all, or not end.
 *  Caught when: the evaluation ends with a verdict that is not "correct"
 *  and the job did not fail (nothing that holds the verdict can be
 *  signalled by the candidate). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) ctx;
    static int struck;
    if (!struck++)
        kill (getppid (), SIGKILL);
    for (int o = 0; o < n_out; o++)
        memset (out[o].data, 0, (size_t) kf_numel (&out[o]) * 4);
    return 0;
}
