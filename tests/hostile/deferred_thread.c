/*  Hostile, deferred work in a thread. When its output still holds the
 *  judge's poison (NaN), kf_forward computes the answer before returning
 *  (the baseline's code). When the output already holds an earlier answer,
 *  as it does between repeated timing calls, it hands the work to a
 *  detached thread of its own and returns after an eighth of a call's time:
 *  the outputs are finished after the call, while nobody is timing (the
 *  thread reads and writes the judge's buffers with process_vm_readv and
 *  process_vm_writev, which fail rather than fault once they are unmapped).
 *  Caught when: the verdict is not "correct", or the speedup is within the
 *  test's factor of the honest baseline's (the work a call leaves running
 *  is counted, or its unfinished outputs are found). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
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

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_wake = PTHREAD_COND_INITIALIZER;
static struct { const float *x; float *y; int64_t rows, n; int pending; } s_job;

static void *
s_worker (void *unused)
{
    (void) unused;
    //  Idle priority: woken by a call, it must not preempt the caller,
    //  whose call is being timed.
    struct sched_param none = { 0 };
    pthread_setschedparam (pthread_self (), SCHED_IDLE, &none);
    float *scratch = NULL;
    size_t scratch_bytes = 0;
    for (;;) {
        pthread_mutex_lock (&s_lock);
        while (!s_job.pending)
            pthread_cond_wait (&s_wake, &s_lock);
        const float *x = s_job.x;
        float *y = s_job.y;
        int64_t rows = s_job.rows, n = s_job.n;
        s_job.pending = 0;
        pthread_mutex_unlock (&s_lock);
        //  The input read and the output written by system calls, the
        //  work done aside: once the judge has unmapped its buffers, a
        //  copy fails instead of faulting.
        size_t bytes = (size_t) (rows * n) * sizeof (float);
        if (bytes > scratch_bytes) {
            free (scratch);
            scratch = malloc (2 * bytes);
            scratch_bytes = scratch ? bytes : 0;
        }
        if (!scratch)
            continue;
        struct iovec mine = { scratch, bytes }, theirs = { (void *) x, bytes };
        if (process_vm_readv (getpid (), &mine, 1, &theirs, 1, 0) != (ssize_t) bytes)
            continue;
        s_softmax (scratch, scratch + rows * n, rows, n);
        struct iovec from = { scratch + rows * n, bytes }, to = { y, bytes };
        process_vm_writev (getpid (), &from, 1, &to, 1, 0);
    }
    return NULL;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static int started;              // 0 not yet, 1 running, -1 failed
    static double compute_s;         // the fastest call that computed
    int64_t n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    float *y = out[0].data;
    //  Started on the first call, so starting it is not timed.
    if (!started) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init (&attr);
        pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create (&t, &attr, s_worker, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy (&attr);
    }
    double t0 = s_now ();
    if (isnan (y[0]) || isnan (y[rows * n - 1]) || compute_s == 0 || started < 0) {
        s_softmax (in[0].data, y, rows, n);
        double took = s_now () - t0;
        compute_s = compute_s == 0 || took < compute_s ? took : compute_s;
        return 0;
    }
    pthread_mutex_lock (&s_lock);
    s_job.x = in[0].data;
    s_job.y = y;
    s_job.rows = rows;
    s_job.n = n;
    s_job.pending = 1;
    pthread_cond_signal (&s_wake);
    pthread_mutex_unlock (&s_lock);
    while (s_now () - t0 < compute_s / 8)
        ;
    return 0;
}
