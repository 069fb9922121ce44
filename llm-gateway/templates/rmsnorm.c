@BANNER@
@DEFINES@

@PRELUDE@

/* ACC is the accumulator type itself: float keeps twice as many values
 * per vector register, double keeps more bits for long rows. */
static void
kf_rmsnorm_row (const float *restrict x, const float *restrict w,
                float *restrict y, int64_t n, float eps)
{
    ACC acc[LANES];
    int64_t i;
    for (int l = 0; l < LANES; l++)
        acc[l] = 0;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] += (ACC) x[i + l] * x[i + l];
    for (; i < n; i++)
        acc[0] += (ACC) x[i] * x[i];
    ACC ss = 0;
    for (int l = 0; l < LANES; l++)
        ss += acc[l];
    float rms = sqrtf ((float) (ss / (ACC) n) + eps);
    float inv = 1.0f / rms;
    (void) inv;
    for (i = 0; i < n; i++)
        y[i] = KF_SCALE (x[i], rms, inv) * w[i];
}

/* THREADS > 1: the rows split into THREADS ranges, one on this thread,
 * the others on threads started and joined within the call. */
#if THREADS > 1
#include <pthread.h>

typedef struct {
    const float *x, *w;
    float *y;
    int64_t n, r0, r1;
    float eps;
} kf_rows_t;

static void *
kf_rmsnorm_rows (void *arg)
{
    const kf_rows_t *j = arg;
    for (int64_t r = j->r0; r < j->r1; r++)
        kf_rmsnorm_row (j->x + r * j->n, j->w, j->y + r * j->n, j->n, j->eps);
    return NULL;
}
#endif

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n, w_rows, w_n;
    if (n_in < 2 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&in[1], &w_rows, &w_n) || w_rows * w_n != n
        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)
        return 1;
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    const float *x = (const float *) in[0].data;
    const float *w = (const float *) in[1].data;
    float *y = (float *) out[0].data;
    int64_t from = 0;
#if THREADS > 1
    kf_rows_t jobs[THREADS];
    pthread_t tid[THREADS];
    int started[THREADS] = { 0 };
    for (int t = 0; t < THREADS; t++)
        jobs[t] = (kf_rows_t) { x, w, y, n, rows * t / THREADS, rows * (t + 1) / THREADS, eps };
    for (int t = 1; t < THREADS; t++)
        started[t] = pthread_create (&tid[t], NULL, kf_rmsnorm_rows, &jobs[t]) == 0;
    kf_rmsnorm_rows (&jobs[0]);
    for (int t = 1; t < THREADS; t++)
        if (started[t])
            pthread_join (tid[t], NULL);
        else
            kf_rmsnorm_rows (&jobs[t]);   /* no thread: this one does it */
    from = rows;
#endif
    for (int64_t r = from; r < rows; r++)
        kf_rmsnorm_row (x + r * n, w, y + r * n, n, eps);
    return 0;
}
