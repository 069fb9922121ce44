/*  Hostile, deferred work in another process. As deferred_thread.c, but
 *  the work a call leaves behind is done by a child process: on its first
 *  call kf_forward moves its input's and output's pages onto shared memory
 *  (a MAP_SHARED copy put in their place with mremap) and forks a helper that
 *  waits on a pipe; each later call that finds its output already written
 *  returns after an eighth of a call's time with a byte on the pipe, and the
 *  helper computes the answer (the baseline's code) into the shared pages.
 *  If it cannot fork, it computes every call itself.
 *  Caught when: the verdict is not "correct", or the speedup is within the
 *  test's factor of the honest baseline's (the candidate may not create
 *  processes, or their work is counted). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
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

//  Puts shared memory, with the same contents, in place of the pages
//  holding [P, P+BYTES). Returns 0 on success.
static int
s_share (void *p, size_t bytes)
{
    long page = sysconf (_SC_PAGESIZE);
    char *lo = (char *) ((uintptr_t) p & ~(uintptr_t) (page - 1));
    char *hi = (char *) (((uintptr_t) p + bytes + (size_t) page - 1) & ~(uintptr_t) (page - 1));
    size_t len = (size_t) (hi - lo);
    void *shared = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return -1;
    memcpy (shared, lo, len);
    if (mremap (shared, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo) == MAP_FAILED) {
        munmap (shared, len);
        return -1;
    }
    return 0;
}

//  The helper: one answer per byte read (bytes that queued up, one answer).
static void
s_helper (int rd, const float *x, float *y, int64_t rows, int64_t n)
{
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    char buf[256];
    for (;;) {
        if (read (rd, buf, 1) != 1)
            _exit (0);
        int flags = fcntl (rd, F_GETFL);
        fcntl (rd, F_SETFL, flags | O_NONBLOCK);
        while (read (rd, buf, sizeof buf) > 0)
            ;
        fcntl (rd, F_SETFL, flags);
        s_softmax (x, y, rows, n);
    }
}

//  Starts the helper for input X and output Y (both moved onto shared
//  memory first, so it sees the inputs of later sets and its writes land).
//  Returns its pipe's writing end, or -1.
static int
s_start_helper (const float *x, float *y, int64_t rows, int64_t n)
{
    int fds[2];
    size_t bytes = (size_t) (rows * n) * sizeof (float);
    if (s_share ((void *) x, bytes) != 0 || s_share (y, bytes) != 0 || pipe (fds) != 0)
        return -1;
    pid_t pid = fork ();
    if (pid == 0) {
        //  Idle priority: woken by the pipe, it must not preempt the
        //  caller, whose call is being timed.
        struct sched_param none = { 0 };
        sched_setscheduler (0, SCHED_IDLE, &none);
        close (fds[1]);
        s_helper (fds[0], x, y, rows, n);
    }
    close (fds[0]);
    if (pid < 0) {
        close (fds[1]);
        return -1;
    }
    fcntl (fds[1], F_SETFL, fcntl (fds[1], F_GETFL) | O_NONBLOCK);
    return fds[1];
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static int wr = -2;              // the helper's pipe; -2 not tried, -1 none
    static float *helped;            // the output the helper writes
    static double compute_s;         // the fastest call that computed
    int64_t n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    float *y = out[0].data;
    //  Started on the first call, so the fork is not timed.
    if (wr == -2) {
        wr = s_start_helper (in[0].data, y, rows, n);
        helped = y;
    }
    double t0 = s_now ();
    if (isnan (y[0]) || isnan (y[rows * n - 1]) || compute_s == 0 || wr < 0 || helped != y) {
        s_softmax (in[0].data, y, rows, n);
        double took = s_now () - t0;
        compute_s = compute_s == 0 || took < compute_s ? took : compute_s;
        return 0;
    }
    ssize_t sent = write (wr, "x", 1);
    (void) sent;
    while (s_now () - t0 < compute_s / 8)
        ;
    return 0;
}
