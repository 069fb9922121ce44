/*  Hostile, work after the answer. kf_forward computes the right answer
 *  within the call (the baseline's code), then hands two helper threads
 *  of its own work that goes on after the call has returned: twice what
 *  the call itself took, spent on the CPU while nobody is timing (a
 *  kernel that defers a pass over its output, or precomputes for the
 *  next call, looks the same to the judge). Its outputs are right and its speed is
 *  the baseline's; only the CPU its process uses between answering and
 *  being stopped shows the work.
 *  Caught when: the verdict is "incorrect", "work hidden from the clock"
 *  (test_hidden_work.sh, with and without a loaded machine). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <pthread.h>
#include <time.h>

static double
s_cpu (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
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
static double s_owed;                // CPU seconds of work handed over
#define S_HELPERS 2

static void *
s_worker (void *unused)
{
    (void) unused;
    volatile double sink = 0;
    for (;;) {
        pthread_mutex_lock (&s_lock);
        while (s_owed <= 0)
            pthread_cond_wait (&s_wake, &s_lock);
        double owed = s_owed / S_HELPERS;
        s_owed -= owed;
        pthread_mutex_unlock (&s_lock);
        for (double t0 = s_cpu (); s_cpu () - t0 < owed;)
            sink += 1;
    }
    return NULL;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static int started;              // 0 not yet, 1 running, -1 failed
    if (!started) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init (&attr);
        pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
        started = 1;
        for (int k = 0; k < S_HELPERS && started == 1; k++)
            started = pthread_create (&t, &attr, s_worker, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy (&attr);
    }
    double t0 = s_cpu ();
    int64_t n = in[0].shape[in[0].rank - 1];
    s_softmax (in[0].data, out[0].data, kf_numel (&in[0]) / n, n);
    pthread_mutex_lock (&s_lock);
    s_owed += 2 * (s_cpu () - t0);
    pthread_cond_broadcast (&s_wake);
    pthread_mutex_unlock (&s_lock);
    return 0;
}
