/*  cuda_levels.cu - where a launch-bound kernel's time varies on one GPU
 *  (tests/bench/cuda-levels.sh, `make bench-cuda-levels`). Figures only.
 *
 *  In one process (one CUDA context): the fixture softmax candidate
 *  (tests/fixtures/kernels/cuda/good_softmax.cu, 1024 x 1024 f32, about
 *  7 us a call) is timed in batches of CALLS back-to-back calls between
 *  two events, L2 flushed before each batch, on several allocations and
 *  on several streams, then in several CUDA contexts of its own (the
 *  driver API's). Prints one line: the process's level (the median over
 *  its primary context's batches, us a call), the spread between its
 *  allocations, between its streams and between its contexts, the first
 *  and last round's medians (a drift in time), and the host's time to
 *  enqueue one call. The script runs it in several processes; the spread
 *  of their levels beside the spreads within each says what moves a
 *  median.
 */
#include "../fixtures/kernels/cuda/good_softmax.cu"

#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define S_ROWS 1024L
#define S_COLS 1024L
#define S_ALLOCS 4
#define S_STREAMS 4
#define S_REPS 5
#define S_CALLS 2200
#define S_CONTEXTS 4

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double
s_median (double *v, int n)
{
    qsort (v, (size_t) n, sizeof *v, s_cmp);
    return v[n / 2];
}

static double
s_spread (const double *v, int n)
{
    double lo = v[0], hi = v[0];
    for (int i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    return (hi - lo) / lo * 100;
}

static void *s_flush;
static const size_t s_flush_bytes = (size_t) 128 << 20;     // over twice the L2

//  One batch on STREAM over X into Y: us a call; *ENQUEUE_US the host's
//  time to enqueue one.
static double
s_batch (cudaStream_t stream, float *x, float *y, int salt, double *enqueue_us)
{
    kf_tensor_t in = { x, KF_F32, 2, { S_ROWS, S_COLS }, { S_COLS, 1 } };
    kf_tensor_t out = { y, KF_F32, 2, { S_ROWS, S_COLS }, { S_COLS, 1 } };
    kf_ctx_t ctx = { KF_BACKEND_CUDA, stream, 0, NULL, NULL, NULL, NULL };
    cudaEvent_t e0, e1;
    cudaEventCreate (&e0);
    cudaEventCreate (&e1);
    cudaMemsetAsync (s_flush, salt, s_flush_bytes, stream);
    cudaDeviceSynchronize ();
    struct timespec a, b;
    cudaEventRecord (e0, stream);
    clock_gettime (CLOCK_MONOTONIC, &a);
    for (int k = 0; k < S_CALLS; k++)
        if (kf_forward (&in, 1, &out, 1, &ctx) != 0)
            exit (1);
    clock_gettime (CLOCK_MONOTONIC, &b);
    cudaEventRecord (e1, stream);
    cudaEventSynchronize (e1);
    float ms = 0;
    cudaEventElapsedTime (&ms, e0, e1);
    cudaEventDestroy (e0);
    cudaEventDestroy (e1);
    if (enqueue_us)
        *enqueue_us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) * 1e-3 / S_CALLS;
    return ms * 1e3 / S_CALLS;
}

int
main (void)
{
    size_t bytes = (size_t) (S_ROWS * S_COLS) * sizeof (float);
    float *x[S_ALLOCS], *y[S_ALLOCS];
    float *host = (float *) malloc (bytes);
    cudaStream_t streams[S_STREAMS];
    if (!host || cudaMalloc (&s_flush, s_flush_bytes) != cudaSuccess) {
        fprintf (stderr, "cuda_levels: no CUDA device or no memory\n");
        return 1;
    }
    for (long i = 0; i < S_ROWS * S_COLS; i++)
        host[i] = (float) ((i * 2654435761u) % 1000) / 333.0f;
    for (int a = 0; a < S_ALLOCS; a++)
        if (cudaMalloc (&x[a], bytes) != cudaSuccess || cudaMalloc (&y[a], bytes) != cudaSuccess
            || cudaMemcpy (x[a], host, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
            return 1;
    for (int s = 0; s < S_STREAMS; s++)
        cudaStreamCreateWithFlags (&streams[s], cudaStreamNonBlocking);
    s_batch (streams[0], x[0], y[0], 0, NULL);     // warm-up

    //  Rounds of one batch on each allocation, then one on each stream,
    //  so that a drift in time shows as a drift, not as a spread.
    double by_alloc[S_ALLOCS][S_REPS], by_stream[S_STREAMS][S_REPS], round_med[S_REPS];
    double all[(S_ALLOCS + S_STREAMS) * S_REPS], enqueue[S_REPS];
    int n = 0;
    for (int r = 0; r < S_REPS; r++) {
        double in_round[S_ALLOCS + S_STREAMS];
        int m = 0;
        for (int a = 0; a < S_ALLOCS; a++)
            all[n++] = in_round[m++] = by_alloc[a][r]
                = s_batch (streams[0], x[a], y[a], r, a ? NULL : &enqueue[r]);
        for (int s = 0; s < S_STREAMS; s++)
            all[n++] = in_round[m++] = by_stream[s][r] = s_batch (streams[s], x[0], y[0], r, NULL);
        round_med[r] = s_median (in_round, m);
    }
    double per_alloc[S_ALLOCS], per_stream[S_STREAMS];
    for (int a = 0; a < S_ALLOCS; a++)
        per_alloc[a] = s_median (by_alloc[a], S_REPS);
    for (int s = 0; s < S_STREAMS; s++)
        per_stream[s] = s_median (by_stream[s], S_REPS);

    //  Contexts: the primary one and S_CONTEXTS - 1 made here, each with
    //  its own buffers, in rounds again.
    CUcontext ctx[S_CONTEXTS];
    float *cx[S_CONTEXTS], *cy[S_CONTEXTS];
    void *cflush[S_CONTEXTS];
    CUdevice dev;
    if (cuCtxGetCurrent (&ctx[0]) != CUDA_SUCCESS || cuCtxGetDevice (&dev) != CUDA_SUCCESS)
        return 1;
    cx[0] = x[0], cy[0] = y[0], cflush[0] = s_flush;
    for (int c = 1; c < S_CONTEXTS; c++) {
        CUctxCreateParams params = {};
        if (cuCtxCreate (&ctx[c], &params, 0, dev) != CUDA_SUCCESS || cudaMalloc (&cx[c], bytes)
            || cudaMalloc (&cy[c], bytes) || cudaMalloc (&cflush[c], s_flush_bytes)
            || cudaMemcpy (cx[c], host, bytes, cudaMemcpyHostToDevice)) {
            fprintf (stderr, "cuda_levels: no context %d\n", c);
            return 1;
        }
        s_flush = cflush[c];
        s_batch (0, cx[c], cy[c], 0, NULL);     // its warm-up
    }
    double by_ctx[S_CONTEXTS][S_REPS], per_ctx[S_CONTEXTS];
    for (int r = 0; r < S_REPS; r++)
        for (int c = 0; c < S_CONTEXTS; c++) {
            cuCtxSetCurrent (ctx[c]);
            s_flush = cflush[c];
            by_ctx[c][r] = s_batch (0, cx[c], cy[c], r, NULL);
        }
    for (int c = 0; c < S_CONTEXTS; c++)
        per_ctx[c] = s_median (by_ctx[c], S_REPS);
    printf ("level %.3f us, allocations spread %.2f%%, streams spread %.2f%%, contexts spread "
            "%.2f%%, rounds %.3f..%.3f us, enqueue %.2f us a call\n", s_median (all, n),
            s_spread (per_alloc, S_ALLOCS), s_spread (per_stream, S_STREAMS),
            s_spread (per_ctx, S_CONTEXTS), round_med[0], round_med[S_REPS - 1],
            s_median (enqueue, S_REPS));
    return 0;
}
