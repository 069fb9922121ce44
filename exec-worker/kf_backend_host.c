/*  kf_exec_backend_host.c - the host (CPU) evaluation harness.
 *
 *  Runs inside the sandboxed evaluation child. The checks exist because
 *  generated kernels cheat or err in known ways: they read stale outputs
 *  (outputs are poisoned with a NaN pattern before every call and must be
 *  fully overwritten), scribble on inputs (inputs are compared with a
 *  pristine clone after every call), write past their buffers (every
 *  buffer ends against a PROT_NONE page and starts after a canary), and
 *  only look right on friendly data (several fresh signed input sets, and
 *  the outputs of the timing loop are checked too).
 *
 *  Timing interleaves reference and candidate samples in this one process
 *  with the same protocol and a cache flush between samples, so the
 *  speedup is a paired ratio that host noise affects equally.
 *
 *  A fault in a kernel is reported from the signal handler with write(2)
 *  only; a shared "phase" byte tells the parent which side was running if
 *  the child dies or hangs without a word.
 */
#include "kf_backend.h"
#include "kf_kernel.h"
#include "kf_task.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define S_CANARY 64
#define S_MAX_TENSORS 32
#define S_MAX_SCRATCH 64

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                            const kf_ctx_t *);

//  A tensor buffer that ends exactly at a PROT_NONE page and starts after
//  a canary, so overruns fault and underruns are seen afterwards.
typedef struct {
    char *map;
    size_t map_len;
    char *data;
    size_t bytes;
    char *guard;             // first byte of the PROT_NONE page
} s_buf_t;

//  Everything the signal handler needs, set up before any kernel runs.
static char s_result_path[4200];
static volatile char *s_phase;
static struct { char *lo, *hi; } s_guards[2 * 3 * S_MAX_TENSORS];
static volatile sig_atomic_t s_n_guards;
static size_t s_page;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// --------------------------------------------------------------------------
//  Signals

static void
s_put (int fd, const char *s)
{
    ssize_t rc = write (fd, s, strlen (s));
    (void) rc;
}

static void
s_on_fault (int sig, siginfo_t *info, void *uctx)
{
    (void) uctx;
    const char *what = "crashed";
    if (sig == SIGSEGV) {
        what = "invalid memory access (SIGSEGV)";
        char *addr = info ? (char *) info->si_addr : NULL;
        for (int i = 0; i < s_n_guards; i++)
            if (addr >= s_guards[i].lo && addr < s_guards[i].hi)
                what = "out-of-bounds access (SIGSEGV)";
    }
    else if (sig == SIGBUS)
        what = "bus error (SIGBUS)";
    else if (sig == SIGFPE)
        what = "arithmetic exception (SIGFPE)";
    else if (sig == SIGILL)
        what = "illegal instruction (SIGILL)";
    else if (sig == SIGABRT)
        what = "aborted (SIGABRT)";
    char phase = s_phase ? *s_phase : 'H';
    int fd = open (s_result_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (phase == 'R')
            s_put (fd, "{\"verdict\": \"reference_failed\", \"detail\": \"reference: ");
        else if (phase == 'C')
            s_put (fd, "{\"verdict\": \"crashed\", \"detail\": \"");
        else
            s_put (fd, "{\"verdict\": \"crashed\", \"detail\": \"harness: ");
        s_put (fd, what);
        s_put (fd, "\"}\n");
        close (fd);
    }
    _exit (3);
}

static void
s_install_handlers (void)
{
    //  An alternate stack, so a candidate that overflows its stack still
    //  gets a verdict.
    static char altstack[64 * 1024];
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
    sigaltstack (&ss, NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_sigaction = s_on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset (&sa.sa_mask);
    int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction (sigs[i], &sa, NULL);
}

// --------------------------------------------------------------------------
//  Guarded buffers

static int
s_buf_new (s_buf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t body = (bytes + S_CANARY + s_page - 1) / s_page * s_page;
    b->map_len = body + s_page;
    b->map = mmap (NULL, b->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->map == MAP_FAILED) {
        b->map = NULL;
        return -1;
    }
    b->guard = b->map + body;
    if (mprotect (b->guard, s_page, PROT_NONE) != 0)
        return -1;
    b->bytes = bytes;
    b->data = b->guard - bytes;
    memset (b->data - S_CANARY, 0xA5, S_CANARY);
    if (s_n_guards < (int) (sizeof s_guards / sizeof s_guards[0])) {
        s_guards[s_n_guards].lo = b->guard;
        s_guards[s_n_guards].hi = b->guard + s_page;
        s_n_guards++;
    }
    return 0;
}

static bool
s_canary_ok (const s_buf_t *b)
{
    for (int i = 0; i < S_CANARY; i++)
        if ((unsigned char) b->data[i - S_CANARY] != 0xA5)
            return false;
    return true;
}

static void
s_buf_free (s_buf_t *b)
{
    if (b->map)
        munmap (b->map, b->map_len);
    b->map = NULL;
}

// --------------------------------------------------------------------------
//  Elements of every dtype, as doubles

static float
s_half_to_float (uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0)
        v = ldexpf ((float) man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf ((float) (man | 1024), exp - 25);
    return sign ? -v : v;
}

static uint16_t
s_float_to_half (float f)
{
    uint32_t x;
    memcpy (&x, &f, 4);
    uint16_t sign = (x >> 16) & 0x8000;
    if (isnan (f))
        return sign | 0x7e00;
    float a = fabsf (f);
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < 6.103515625e-05f)       // subnormal: units of 2^-24
        return sign | (uint16_t) lrintf (a * 16777216.0f);
    int e;
    float m = frexpf (a, &e);       // a = m * 2^e, m in [0.5, 1)
    uint32_t man = (uint32_t) lrintf ((m * 2 - 1) * 1024);
    int exp = e - 1 + 15;
    if (man == 1024) {
        man = 0;
        exp++;
    }
    if (exp >= 31)
        return sign | 0x7c00;
    return sign | (uint16_t) (exp << 10) | (uint16_t) man;
}

static double
s_get (int dtype, const void *p, size_t i)
{
    switch (dtype) {
        case KF_F32: return ((const float *) p)[i];
        case KF_F64: return ((const double *) p)[i];
        case KF_F16: return s_half_to_float (((const uint16_t *) p)[i]);
        case KF_BF16: {
            uint32_t x = (uint32_t) ((const uint16_t *) p)[i] << 16;
            float f;
            memcpy (&f, &x, 4);
            return f;
        }
        case KF_I32: return ((const int32_t *) p)[i];
        case KF_I64: return (double) ((const int64_t *) p)[i];
    }
    return 0;
}

static void
s_set (int dtype, void *p, size_t i, double v)
{
    switch (dtype) {
        case KF_F32: ((float *) p)[i] = (float) v; break;
        case KF_F64: ((double *) p)[i] = v; break;
        case KF_F16: ((uint16_t *) p)[i] = s_float_to_half ((float) v); break;
        case KF_BF16: {
            float f = (float) v;
            uint32_t x;
            memcpy (&x, &f, 4);
            x += 0x7fff + ((x >> 16) & 1);     // round to nearest even
            ((uint16_t *) p)[i] = (uint16_t) (x >> 16);
            break;
        }
        case KF_I32: ((int32_t *) p)[i] = (int32_t) llround (v); break;
        case KF_I64: ((int64_t *) p)[i] = (int64_t) llround (v); break;
    }
}

//  Poison: a quiet NaN with a distinctive payload for floats (no kernel
//  computes it by accident), a fixed odd pattern for integers.
static void
s_poison (int dtype, void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        switch (dtype) {
            case KF_F32: ((uint32_t *) p)[i] = 0x7fc0dead; break;
            case KF_F64: ((uint64_t *) p)[i] = 0x7ff8deaddeaddeadULL; break;
            case KF_F16: ((uint16_t *) p)[i] = 0x7ead; break;
            case KF_BF16: ((uint16_t *) p)[i] = 0x7fad; break;
            case KF_I32: ((uint32_t *) p)[i] = 0xdeadbeef; break;
            case KF_I64: ((uint64_t *) p)[i] = 0xdeadbeefdeadbeefULL; break;
        }
}

static bool
s_is_poison (int dtype, const void *p, size_t i)
{
    switch (dtype) {
        case KF_F32: return ((const uint32_t *) p)[i] == 0x7fc0dead;
        case KF_F64: return ((const uint64_t *) p)[i] == 0x7ff8deaddeaddeadULL;
        case KF_F16: return ((const uint16_t *) p)[i] == 0x7ead;
        case KF_BF16: return ((const uint16_t *) p)[i] == 0x7fad;
        case KF_I32: return ((const uint32_t *) p)[i] == 0xdeadbeef;
        case KF_I64: return ((const uint64_t *) p)[i] == 0xdeadbeefdeadbeefULL;
    }
    return false;
}

// --------------------------------------------------------------------------
//  Inputs

static uint64_t
s_next (uint64_t *state)
{
    //  splitmix64: tiny, seedable from any integer, good enough for test data.
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double
s_uniform01 (uint64_t *state)
{
    return ((s_next (state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double
s_normal (uint64_t *state)
{
    double u = s_uniform01 (state), v = s_uniform01 (state);
    return sqrt (-2 * log (u)) * cos (2 * M_PI * v);
}

static double
s_num (json_t *obj, const char *key, double dflt)
{
    json_t *v = json_object_get (obj, key);
    return json_is_number (v) ? json_number_value (v) : dflt;
}

static void
s_fill (json_t *dist, int dtype, void *p, size_t n, uint64_t seed)
{
    uint64_t st = seed;
    const char *kind = json_string_value (json_object_get (dist, "kind"));
    if (!kind)
        kind = "normal";
    for (size_t i = 0; i < n; i++) {
        double v;
        if (strcmp (kind, "uniform") == 0) {
            double lo = s_num (dist, "low", -1), hi = s_num (dist, "high", 1);
            v = lo + (hi - lo) * s_uniform01 (&st);
        }
        else if (strcmp (kind, "constant") == 0)
            v = s_num (dist, "value", 0);
        else if (strcmp (kind, "heavy_tail") == 0) {
            //  Student's t with `dof` degrees of freedom: rare huge values
            //  that expose overflow and cancellation.
            int dof = (int) s_num (dist, "dof", 3);
            if (dof < 1)
                dof = 1;
            if (dof > 64)
                dof = 64;
            double chi = 0;
            for (int k = 0; k < dof; k++) {
                double z = s_normal (&st);
                chi += z * z;
            }
            v = s_num (dist, "scale", 1) * s_normal (&st) / sqrt (chi / dof);
        }
        else
            v = s_num (dist, "mean", 0) + s_num (dist, "std", 1) * s_normal (&st);
        s_set (dtype, p, i, v);
    }
}

// --------------------------------------------------------------------------
//  The evaluation

typedef struct {
    const char *name;
    int dtype;
    size_t numel, bytes;
    json_t *spec;            // borrowed from the task
} s_spec_t;

typedef struct {
    void *ptrs[S_MAX_SCRATCH];
    int n;
} s_scratch_t;

static void *
s_scratch_alloc (void *state, size_t bytes)
{
    s_scratch_t *s = state;
    if (s->n >= S_MAX_SCRATCH)
        return NULL;
    void *p = malloc (bytes ? bytes : 1);
    if (p)
        s->ptrs[s->n++] = p;
    return p;
}

static void
s_scratch_reset (s_scratch_t *s)
{
    for (int i = 0; i < s->n; i++)
        free (s->ptrs[i]);
    s->n = 0;
}

typedef struct {
    s_forward_fn *ref_fn, *cand_fn;
    int n_in, n_out;
    s_spec_t in[S_MAX_TENSORS], out[S_MAX_TENSORS];
    s_buf_t in_buf[S_MAX_TENSORS], ref_buf[S_MAX_TENSORS], cand_buf[S_MAX_TENSORS];
    void *in_clone[S_MAX_TENSORS], *ref_saved[S_MAX_TENSORS];
    kf_tensor_t in_t[S_MAX_TENSORS], ref_t[S_MAX_TENSORS], cand_t[S_MAX_TENSORS];
    kf_ctx_t ctx;
    const char **scalar_names;
    double *scalars;
    s_scratch_t scratch;
    double rtol, atol, min_match, min_cosine;
    //  Correctness figures, worst over the sets.
    int sets;
    double match_fraction, max_abs, max_rel, cosine;
    long nonfinite_mismatch;
    char detail[512];
} s_eval_t;

static void
s_tensor (kf_tensor_t *t, json_t *spec, int dtype, void *data)
{
    memset (t, 0, sizeof *t);
    t->data = data;
    t->dtype = dtype;
    json_t *shape = json_object_get (spec, "shape");
    t->rank = (int32_t) json_array_size (shape);
    for (int d = 0; d < t->rank; d++)
        t->shape[d] = json_integer_value (json_array_get (shape, (size_t) d));
    int64_t stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        t->strides[d] = stride;
        stride *= t->shape[d];
    }
}

static int
s_spec (s_spec_t *s, json_t *spec, char *why, size_t why_size)
{
    s->spec = spec;
    s->name = json_string_value (json_object_get (spec, "name"));
    if (!s->name)
        s->name = "?";
    s->dtype = kf_dtype_from_name (json_string_value (json_object_get (spec, "dtype")));
    if (s->dtype < 0) {
        snprintf (why, why_size, "tensor '%s': unknown dtype", s->name);
        return -1;
    }
    json_t *shape = json_object_get (spec, "shape");
    if (!json_is_array (shape) || json_array_size (shape) > KF_MAX_RANK) {
        snprintf (why, why_size, "tensor '%s': bad shape", s->name);
        return -1;
    }
    s->numel = 1;
    size_t i;
    json_t *dim;
    json_array_foreach (shape, i, dim) {
        if (!json_is_integer (dim) || json_integer_value (dim) <= 0) {
            snprintf (why, why_size, "tensor '%s': bad shape", s->name);
            return -1;
        }
        s->numel *= (size_t) json_integer_value (dim);
    }
    s->bytes = s->numel * kf_dtype_size (s->dtype);
    return 0;
}

//  Runs FN with the outputs OUT_T; tracks the phase for the parent.
static int
s_call (s_eval_t *e, s_forward_fn *fn, kf_tensor_t *out_t, char phase)
{
    *s_phase = phase;
    int rc = fn (e->in_t, e->n_in, out_t, e->n_out, &e->ctx);
    *s_phase = 'H';
    s_scratch_reset (&e->scratch);
    return rc;
}

//  Compares candidate outputs with the reference's. Returns 0 when they
//  agree within the tolerance; otherwise fills e->detail.
static int
s_compare (s_eval_t *e, void *const *ref, const char *when)
{
    int bad = 0;
    for (int o = 0; o < e->n_out; o++) {
        const s_spec_t *s = &e->out[o];
        const void *c = e->cand_buf[o].data;
        size_t matched = 0, unwritten = 0;
        long nonfinite = 0;
        double dot = 0, nr = 0, nc = 0, max_abs = 0, max_rel = 0;
        for (size_t i = 0; i < s->numel; i++) {
            if (s_is_poison (s->dtype, c, i) && !s_is_poison (s->dtype, ref[o], i)) {
                unwritten++;
                continue;
            }
            double cv = s_get (s->dtype, c, i), rv = s_get (s->dtype, ref[o], i);
            if (!isfinite (rv) || !isfinite (cv)) {
                bool same = (isnan (rv) && isnan (cv)) || (isinf (rv) && cv == rv);
                if (same)
                    matched++;
                else
                    nonfinite++;
                continue;
            }
            double abs_err = fabs (cv - rv);
            double rel_err = rv != 0 ? abs_err / fabs (rv) : (abs_err ? INFINITY : 0);
            if (abs_err > max_abs)
                max_abs = abs_err;
            if (rel_err > max_rel)
                max_rel = rel_err;
            if (rel_err < e->rtol || abs_err <= e->atol)
                matched++;
            dot += cv * rv;
            nr += rv * rv;
            nc += cv * cv;
        }
        double frac = s->numel ? (double) matched / (double) s->numel : 1;
        double cosine = nr == 0 && nc == 0 ? 1
                      : (nr == 0 || nc == 0) ? 0 : dot / sqrt (nr * nc);
        if (frac < e->match_fraction)
            e->match_fraction = frac;
        if (cosine < e->cosine)
            e->cosine = cosine;
        if (max_abs > e->max_abs)
            e->max_abs = max_abs;
        if (max_rel > e->max_rel)
            e->max_rel = max_rel;
        e->nonfinite_mismatch += nonfinite;
        if (bad)
            continue;
        if (unwritten) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: output '%s': %zu of %zu elements not written",
                      when, s->name, unwritten, s->numel);
            bad = 1;
        }
        else if (nonfinite) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: output '%s': %ld NaN/Inf values where the reference has finite ones (or the reverse)",
                      when, s->name, nonfinite);
            bad = 1;
        }
        else if (frac < e->min_match) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: output '%s': %.2f%% of elements within tolerance (need %.2f%%; rtol %g, atol %g), max abs err %.3g, max rel err %.3g",
                      when, s->name, 100 * frac, 100 * e->min_match, e->rtol,
                      e->atol, max_abs, max_rel);
            bad = 1;
        }
        else if (cosine < e->min_cosine) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: output '%s': cosine similarity %.6f below %.6f",
                      when, s->name, cosine, e->min_cosine);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

//  Inputs unchanged and canaries intact after a candidate call.
static int
s_check_memory (s_eval_t *e, const char *when)
{
    for (int i = 0; i < e->n_in; i++)
        if (memcmp (e->in_buf[i].data, e->in_clone[i], e->in[i].bytes) != 0) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s'",
                      when, e->in[i].name);
            return -1;
        }
    for (int i = 0; i < e->n_in; i++)
        if (!s_canary_ok (&e->in_buf[i])) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: out-of-bounds write before input '%s'", when, e->in[i].name);
            return -2;
        }
    for (int o = 0; o < e->n_out; o++)
        if (!s_canary_ok (&e->cand_buf[o])) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: out-of-bounds write before output '%s'", when, e->out[o].name);
            return -2;
        }
    return 0;
}

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double
s_quantile (double *sorted, int n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (n - 1);
    int lo = (int) pos;
    int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

static json_t *
s_stats (double *ns, int n, int calls)
{
    double *sorted = malloc ((size_t) (n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return json_object ();
    memcpy (sorted, ns, (size_t) n * sizeof *sorted);
    qsort (sorted, (size_t) n, sizeof *sorted, s_cmp_double);
    json_t *o = json_pack ("{s:f, s:f, s:f, s:i, s:i}",
                           "median_ns", s_quantile (sorted, n, 0.5),
                           "p10_ns", s_quantile (sorted, n, 0.1),
                           "p90_ns", s_quantile (sorted, n, 0.9),
                           "samples", n, "calls_per_sample", calls);
    free (sorted);
    return o;
}

//  Evicts the last-level cache so each sample starts cold, like the
//  first call of a real model step, for both sides alike.
static void
s_flush (unsigned char *buf, size_t size, unsigned salt)
{
    memset (buf, (int) (salt & 0xff), size);
    volatile unsigned char sink = buf[size / 2];
    (void) sink;
}

typedef struct {
    double *ref_ns, *cand_ns;
    int samples, ref_calls, cand_calls;
} s_timing_t;

//  Returns 0, or -1 with e->detail when a kernel failed during timing.
static int
s_time (s_eval_t *e, json_t *timing, s_timing_t *t, int *ref_failed)
{
    double min_time = s_num (timing, "min_time_s", 1);
    int min_samples = (int) s_num (timing, "min_samples", 10);
    double warmup_s = s_num (timing, "warmup_s", 1);
    int warmup_calls = (int) s_num (timing, "warmup_calls", 10);
    if (min_samples < 3)
        min_samples = 3;
    const int max_samples = 100000;

    long llc = sysconf (_SC_LEVEL3_CACHE_SIZE);
    size_t flush_size = 2 * (size_t) (llc > 0 ? llc : 32 << 20);
    unsigned char *flush = malloc (flush_size);
    if (!flush) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for the cache flush");
        return -1;
    }

    //  Warm-up, interleaved, measuring each side's cost per call.
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = s_now ();
    while (calls < warmup_calls || s_now () - start < warmup_s) {
        double t0 = s_now ();
        if (s_call (e, e->ref_fn, e->ref_t, 'R')) {
            *ref_failed = 1;
            goto fail;
        }
        double t1 = s_now ();
        if (s_call (e, e->cand_fn, e->cand_t, 'C'))
            goto cand_fail;
        ref_total += t1 - t0;
        cand_total += s_now () - t1;
        calls++;
    }
    //  Inner loops of about a millisecond: far above clock resolution,
    //  short enough to collect many samples.
    double ref_call = ref_total / calls, cand_call = cand_total / calls;
    t->ref_calls = ref_call > 0 ? (int) ceil (1e-3 / ref_call) : 1000;
    t->cand_calls = cand_call > 0 ? (int) ceil (1e-3 / cand_call) : 1000;
    if (t->ref_calls > 100000) t->ref_calls = 100000;
    if (t->cand_calls > 100000) t->cand_calls = 100000;
    if (t->ref_calls < 1) t->ref_calls = 1;
    if (t->cand_calls < 1) t->cand_calls = 1;

    int cap = 64;
    t->ref_ns = malloc ((size_t) cap * sizeof (double));
    t->cand_ns = malloc ((size_t) cap * sizeof (double));
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < max_samples) {
        if (!t->ref_ns || !t->cand_ns) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
            goto fail;
        }
        s_flush (flush, flush_size, (unsigned) t->samples);
        *s_phase = 'R';
        double t0 = s_now ();
        for (int k = 0; k < t->ref_calls; k++)
            if (e->ref_fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->ctx)) {
                *ref_failed = 1;
                goto fail;
            }
            else
                s_scratch_reset (&e->scratch);
        double ref_s = s_now () - t0;
        s_flush (flush, flush_size, (unsigned) t->samples + 1);
        *s_phase = 'C';
        t0 = s_now ();
        for (int k = 0; k < t->cand_calls; k++)
            if (e->cand_fn (e->in_t, e->n_in, e->cand_t, e->n_out, &e->ctx))
                goto cand_fail;
            else
                s_scratch_reset (&e->scratch);
        double cand_s = s_now () - t0;
        *s_phase = 'H';
        t->ref_ns[t->samples] = ref_s * 1e9 / t->ref_calls;
        t->cand_ns[t->samples] = cand_s * 1e9 / t->cand_calls;
        t->samples++;
        measured += ref_s + cand_s;
        if (t->samples == cap) {
            cap *= 2;
            double *r = realloc (t->ref_ns, (size_t) cap * sizeof (double));
            if (r)
                t->ref_ns = r;
            double *c = realloc (t->cand_ns, (size_t) cap * sizeof (double));
            if (c)
                t->cand_ns = c;
            if (!r || !c)
                break;
        }
    }
    *s_phase = 'H';
    free (flush);
    return 0;
cand_fail:
    snprintf (e->detail, sizeof e->detail, "timing: candidate kf_forward returned non-zero");
fail:
    *s_phase = 'H';
    s_scratch_reset (&e->scratch);
    free (flush);
    return -1;
}

static void
s_write_result (const char *dir, json_t *result)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/result.json", dir);
    json_dump_file (result, path, JSON_INDENT (1));
}

static void
s_verdict (const char *dir, const char *verdict, const char *detail)
{
    json_t *r = json_pack ("{s:s, s:s}", "verdict", verdict, "detail", detail);
    s_write_result (dir, r);
    json_decref (r);
}

static int
s_host_child_main (const char *dir, json_t *job)
{
    s_page = (size_t) sysconf (_SC_PAGESIZE);
    snprintf (s_result_path, sizeof s_result_path, "%s/result.json", dir);

    //  The phase byte lives in a shared file mapping, so the parent can
    //  read it even after killing us mid-call.
    char path[4200];
    snprintf (path, sizeof path, "%s/phase", dir);
    int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate (fd, 1) != 0)
        return 2;
    s_phase = mmap (NULL, 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close (fd);
    if (s_phase == MAP_FAILED) {
        s_phase = NULL;
        return 2;
    }
    *s_phase = 'H';
    s_install_handlers ();

    s_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    json_t *tol = json_object_get (task, "tolerance");
    e->rtol = s_num (tol, "rtol", 1e-2);
    e->atol = s_num (tol, "atol", 1e-5);
    e->min_match = s_num (tol, "min_match", 0.99);
    e->min_cosine = s_num (tol, "min_cosine", 0.99985);
    e->match_fraction = 1;
    e->cosine = 1;
    int rc = 0;
    void *ref_lib = NULL, *cand_lib = NULL;
    json_t *result = NULL;
    s_timing_t tm = { 0 };

    //  The reference first: if it does not load, the job itself is bad.
    snprintf (path, sizeof path, "%s/reference.so", dir);
    ref_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    e->ref_fn = ref_lib ? (s_forward_fn *) dlsym (ref_lib, "kf_forward") : NULL;
    if (!e->ref_fn) {
        snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
        s_verdict (dir, "reference_failed", e->detail);
        goto done;
    }
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    *s_phase = 'C';     // constructors of the candidate run in dlopen
    cand_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    e->cand_fn = cand_lib ? (s_forward_fn *) dlsym (cand_lib, "kf_forward") : NULL;
    *s_phase = 'H';
    if (!e->cand_fn) {
        const char *err = dlerror ();
        snprintf (e->detail, sizeof e->detail, "candidate does not load: %s",
                  err ? err : "no kf_forward");
        s_verdict (dir, "load_failed", e->detail);
        goto done;
    }

    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > S_MAX_TENSORS || e->n_out > S_MAX_TENSORS) {
        s_verdict (dir, "reference_failed", "task: need 1 to 32 outputs and at most 32 inputs");
        goto done;
    }
    for (int i = 0; i < e->n_in; i++) {
        if (s_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail)
            || s_buf_new (&e->in_buf[i], e->in[i].bytes)
            || !(e->in_clone[i] = malloc (e->in[i].bytes ? e->in[i].bytes : 1))) {
            s_verdict (dir, "reference_failed", e->detail[0] ? e->detail : "out of memory for inputs");
            goto done;
        }
        s_tensor (&e->in_t[i], e->in[i].spec, e->in[i].dtype, e->in_buf[i].data);
    }
    for (int o = 0; o < e->n_out; o++) {
        if (s_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail, sizeof e->detail)
            || s_buf_new (&e->ref_buf[o], e->out[o].bytes)
            || s_buf_new (&e->cand_buf[o], e->out[o].bytes)
            || !(e->ref_saved[o] = malloc (e->out[o].bytes ? e->out[o].bytes : 1))) {
            s_verdict (dir, "reference_failed", e->detail[0] ? e->detail : "out of memory for outputs");
            goto done;
        }
        s_tensor (&e->ref_t[o], e->out[o].spec, e->out[o].dtype, e->ref_buf[o].data);
        s_tensor (&e->cand_t[o], e->out[o].spec, e->out[o].dtype, e->cand_buf[o].data);
    }
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        s_verdict (dir, "reference_failed", "out of memory for scalars");
        goto done;
    }
    const char *key;
    json_t *value;
    json_object_foreach (scalars, key, value) {
        e->scalar_names[e->ctx.n_scalars] = key;
        e->scalars[e->ctx.n_scalars++] = json_number_value (value);
    }
    e->ctx.backend = KF_BACKEND_HOST;
    e->ctx.scalar_names = e->scalar_names;
    e->ctx.scalars = e->scalars;
    e->ctx.scratch_alloc = s_scratch_alloc;
    e->ctx.scratch_state = &e->scratch;

    //  Correctness: fresh inputs per set, seeded from the job's seed.
    const int n_sets = 5;
    const char *verdict = "correct";
    for (int set = 0; set < n_sets && !strcmp (verdict, "correct"); set++) {
        for (int i = 0; i < e->n_in; i++) {
            uint64_t s = seed * 0x100000001b3ULL + (uint64_t) set * 1000003 + (uint64_t) i;
            s_fill (json_object_get (e->in[i].spec, "dist"), e->in[i].dtype,
                    e->in_buf[i].data, e->in[i].numel, s);
            memcpy (e->in_clone[i], e->in_buf[i].data, e->in[i].bytes);
        }
        for (int o = 0; o < e->n_out; o++)
            s_poison (e->out[o].dtype, e->ref_buf[o].data, e->out[o].numel);
        int r = s_call (e, e->ref_fn, e->ref_t, 'R');
        if (r) {
            snprintf (e->detail, sizeof e->detail, "reference kf_forward returned %d on set %d", r, set);
            s_verdict (dir, "reference_failed", e->detail);
            goto done;
        }
        for (int o = 0; o < e->n_out; o++)
            memcpy (e->ref_saved[o], e->ref_buf[o].data, e->out[o].bytes);
        for (int i = 0; i < e->n_in; i++)
            memcpy (e->in_buf[i].data, e->in_clone[i], e->in[i].bytes);
        for (int o = 0; o < e->n_out; o++)
            s_poison (e->out[o].dtype, e->cand_buf[o].data, e->out[o].numel);
        r = s_call (e, e->cand_fn, e->cand_t, 'C');
        e->sets = set + 1;
        char when[32];
        snprintf (when, sizeof when, "set %d", set);
        int mem = s_check_memory (e, when);
        if (mem == -2)
            verdict = "crashed";
        else if (mem == -1)
            verdict = "incorrect";
        else if (r) {
            snprintf (e->detail, sizeof e->detail, "%s: candidate kf_forward returned %d", when, r);
            verdict = "incorrect";
        }
        else if (s_compare (e, e->ref_saved, when))
            verdict = "incorrect";
    }

    //  Timing on the last set, then the timing loop's outputs checked.
    int ref_failed = 0;
    if (!strcmp (verdict, "correct")) {
        for (int o = 0; o < e->n_out; o++)
            s_poison (e->out[o].dtype, e->cand_buf[o].data, e->out[o].numel);
        if (s_time (e, timing, &tm, &ref_failed)) {
            if (ref_failed) {
                s_verdict (dir, "reference_failed", "reference kf_forward failed during timing");
                goto done;
            }
            verdict = "incorrect";
        }
        else {
            int mem = s_check_memory (e, "timing");
            if (mem == -2)
                verdict = "crashed";
            else if (mem == -1 || s_compare (e, e->ref_saved, "timing"))
                verdict = "incorrect";
        }
    }

    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (!strcmp (verdict, "correct")
                                 ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", json_pack (
        "{s:i, s:f, s:f, s:f, s:f, s:I}", "sets", e->sets,
        "match_fraction", e->match_fraction,
        "max_abs_err", isfinite (e->max_abs) ? e->max_abs : 1e308,
        "max_rel_err", isfinite (e->max_rel) ? e->max_rel : 1e308,
        "cosine", isfinite (e->cosine) ? e->cosine : 0.0,
        "nonfinite_mismatch", (json_int_t) e->nonfinite_mismatch));
    if (tm.samples > 0 && !strcmp (verdict, "correct")) {
        double *ratio = malloc ((size_t) tm.samples * sizeof *ratio);
        if (ratio) {
            for (int i = 0; i < tm.samples; i++)
                ratio[i] = tm.cand_ns[i] > 0 ? tm.ref_ns[i] / tm.cand_ns[i] : 0;
            qsort (ratio, (size_t) tm.samples, sizeof *ratio, s_cmp_double);
            json_object_set_new (result, "speedup",
                                 json_real (s_quantile (ratio, tm.samples, 0.5)));
            free (ratio);
        }
        json_object_set_new (result, "candidate", s_stats (tm.cand_ns, tm.samples, tm.cand_calls));
        json_object_set_new (result, "reference", s_stats (tm.ref_ns, tm.samples, tm.ref_calls));
    }
    else
        json_object_set_new (result, "speedup", json_null ());
    s_write_result (dir, result);

done:
    json_decref (result);
    free (tm.ref_ns);
    free (tm.cand_ns);
    for (int i = 0; i < S_MAX_TENSORS; i++) {
        s_buf_free (&e->in_buf[i]);
        s_buf_free (&e->ref_buf[i]);
        s_buf_free (&e->cand_buf[i]);
        free (e->in_clone[i]);
        free (e->ref_saved[i]);
    }
    free (e->scalar_names);
    free (e->scalars);
    free (e);
    //  Libraries stay loaded: a candidate's destructors could still run
    //  code, and the process ends right after this anyway.
    (void) ref_lib;
    (void) cand_lib;
    return rc;
}

static json_t *
s_host_devices (void)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen ("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets (line, sizeof line, f))
            if (strncmp (line, "model name", 10) == 0) {
                char *colon = strchr (line, ':');
                if (colon) {
                    colon++;
                    while (*colon == ' ' || *colon == '\t')
                        colon++;
                    snprintf (model, sizeof model, "%.*s", (int) strcspn (colon, "\n"), colon);
                }
                break;
            }
        fclose (f);
    }
    struct sysinfo si;
    json_int_t memory = sysinfo (&si) == 0 ? (json_int_t) si.totalram * si.mem_unit : 0;
    json_t *devices = json_array ();
    json_array_append_new (devices, json_pack ("{s:s, s:i, s:I}", "name", model,
                           "cores", (int) sysconf (_SC_NPROCESSORS_ONLN),
                           "memory_bytes", memory));
    return devices;
}

const kf_exec_backend_t kf_exec_backend_host = {
    .name = "host",
    .child_main = s_host_child_main,
    .devices = s_host_devices,
};
