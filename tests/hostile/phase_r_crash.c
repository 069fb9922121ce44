/*  Hostile, a crash pinned on the reference. On its first call kf_forward
 *  writes 'R' ("the reference is running") into every file named "phase" it
 *  can find (its working directory, /proc/self/cwd, $TMPDIR and the other
 *  evaluation directories next to it), then dereferences a bad pointer
 *  (SIGSEGV). The judge, trusting the phase byte, would report the
 *  reference as failed: the job fails instead of the candidate getting a
 *  verdict, and a run whose reference "fails" loses every candidate.
 *  Caught when: the job does not fail (ok, nothing blamed on the
 *  reference) and the verdict is not "correct" (crashed, in fact). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void
s_mark (const char *path)
{
    int fd = open (path, O_RDWR);
    if (fd >= 0) {
        ssize_t n = pwrite (fd, "R", 1, 0);
        (void) n;
        close (fd);
    }
}

static void
s_mark_glob (const char *pattern)
{
    glob_t g;
    if (glob (pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            s_mark (g.gl_pathv[i]);
    globfree (&g);
}

static void
s_blame_the_reference (void)
{
    char pattern[4200];
    s_mark ("phase");
    s_mark ("/proc/self/cwd/phase");
    const char *tmp = getenv ("TMPDIR");
    if (tmp) {
        snprintf (pattern, sizeof pattern, "%s/phase", tmp);
        s_mark (pattern);
        snprintf (pattern, sizeof pattern, "%s/../kf-*/phase", tmp);
        s_mark_glob (pattern);
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) out; (void) n_out; (void) ctx;
    s_blame_the_reference ();
    *(volatile int *) (uintptr_t) 16 = 1;
    return 0;
}
