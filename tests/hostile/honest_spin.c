/*  Honest, two threads with a spinning helper. kf_forward splits the rows
 *  of the baseline's softmax between itself and one helper thread, and
 *  waits for the helper's half before it returns. Between calls the
 *  helper spins for up to 100 microseconds on the next call's number
 *  before it sleeps, as a spin-then-block barrier does, so within a batch
 *  it never leaves its CPU. Nothing is done after a call has returned:
 *  the helper only spins for a moment.
 *  Must get: "correct". A judge that read the process's CPU clock while
 *  the helper was still on its CPU saw up to a tick of the helper's work
 *  in the call only after the stop, and charged it as work hidden from
 *  the clock (test_hidden_work.sh). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

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

#define S_SPIN_NS 100000

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_wake = PTHREAD_COND_INITIALIZER;
static atomic_int s_call;            // the call the helper is to do
static atomic_int s_done;            // the last call the helper finished
static const float *s_x;
static float *s_y;
static int64_t s_rows, s_n;

static long long
s_now_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *
s_helper (void *unused)
{
    (void) unused;
    int seen = 0;
    for (;;) {
        long long t0 = s_now_ns ();
        while (atomic_load (&s_call) == seen && s_now_ns () - t0 < S_SPIN_NS)
            ;
        if (atomic_load (&s_call) == seen) {
            pthread_mutex_lock (&s_lock);
            while (atomic_load (&s_call) == seen)
                pthread_cond_wait (&s_wake, &s_lock);
            pthread_mutex_unlock (&s_lock);
        }
        seen = atomic_load (&s_call);
        int64_t half = s_rows / 2;
        s_softmax (s_x + half * s_n, s_y + half * s_n, s_rows - half, s_n);
        atomic_store (&s_done, seen);
    }
    return NULL;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static int started;              // 0 not yet, 1 running, -1 failed
    int64_t n = in[0].shape[in[0].rank - 1];
    int64_t rows = kf_numel (&in[0]) / n;
    if (!started) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init (&attr);
        pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create (&t, &attr, s_helper, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy (&attr);
    }
    if (started < 0) {
        s_softmax (in[0].data, out[0].data, rows, n);
        return 0;
    }
    s_x = in[0].data;
    s_y = out[0].data;
    s_rows = rows;
    s_n = n;
    pthread_mutex_lock (&s_lock);
    int call = atomic_fetch_add (&s_call, 1) + 1;
    pthread_cond_signal (&s_wake);
    pthread_mutex_unlock (&s_lock);
    s_softmax (in[0].data, out[0].data, rows / 2, n);
    while (atomic_load (&s_done) != call)
        ;
    return 0;
}
