/*  kf_eval_check.c - input generation, poisoning, comparison, timing
 *  statistics and the fault handler, shared by every evaluation backend.
 *
 *  Moved out of the host harness so that a device backend judges a
 *  candidate by exactly the same rules: it copies its tensors to the
 *  host and calls the same comparison, so "correct" means one thing
 *  whichever device ran the kernel.
 */
#include "kf_eval_check.h"
#include "kf_task.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
void
kf_eval_poison (int dtype, void *p, size_t n)
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

bool
kf_eval_is_poison (int dtype, const void *p, size_t i)
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

double
kf_eval_num (json_t *obj, const char *key, double dflt)
{
    json_t *v = json_object_get (obj, key);
    return json_is_number (v) ? json_number_value (v) : dflt;
}

void
kf_eval_fill (json_t *dist, int dtype, void *p, size_t n, uint64_t seed)
{
    uint64_t st = seed;
    const char *kind = json_string_value (json_object_get (dist, "kind"));
    if (!kind)
        kind = "normal";
    for (size_t i = 0; i < n; i++) {
        double v;
        if (strcmp (kind, "uniform") == 0) {
            double lo = kf_eval_num (dist, "low", -1), hi = kf_eval_num (dist, "high", 1);
            v = lo + (hi - lo) * s_uniform01 (&st);
        }
        else if (strcmp (kind, "constant") == 0)
            v = kf_eval_num (dist, "value", 0);
        else if (strcmp (kind, "heavy_tail") == 0) {
            //  Student's t with `dof` degrees of freedom: rare huge values
            //  that expose overflow and cancellation.
            int dof = (int) kf_eval_num (dist, "dof", 3);
            if (dof < 1)
                dof = 1;
            if (dof > 64)
                dof = 64;
            double chi = 0;
            for (int k = 0; k < dof; k++) {
                double z = s_normal (&st);
                chi += z * z;
            }
            v = kf_eval_num (dist, "scale", 1) * s_normal (&st) / sqrt (chi / dof);
        }
        else
            v = kf_eval_num (dist, "mean", 0) + kf_eval_num (dist, "std", 1) * s_normal (&st);
        s_set (dtype, p, i, v);
    }
}

uint64_t
kf_eval_input_seed (uint64_t seed, int set, int input)
{
    return seed * 0x100000001b3ULL + (uint64_t) set * 1000003 + (uint64_t) input;
}

// --------------------------------------------------------------------------
//  Tensors

int
kf_eval_spec (kf_eval_spec_t *s, json_t *spec, char *why, size_t why_size)
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

void
kf_eval_tensor (kf_tensor_t *t, const kf_eval_spec_t *s, void *data)
{
    memset (t, 0, sizeof *t);
    t->data = data;
    t->dtype = s->dtype;
    json_t *shape = json_object_get (s->spec, "shape");
    t->rank = (int32_t) json_array_size (shape);
    for (int d = 0; d < t->rank; d++)
        t->shape[d] = json_integer_value (json_array_get (shape, (size_t) d));
    int64_t stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        t->strides[d] = stride;
        stride *= t->shape[d];
    }
}

// --------------------------------------------------------------------------
//  Comparison

void
kf_eval_tol_from_task (json_t *task, kf_eval_tol_t *tol, kf_eval_worst_t *w)
{
    json_t *t = json_object_get (task, "tolerance");
    tol->rtol = kf_eval_num (t, "rtol", 1e-2);
    tol->atol = kf_eval_num (t, "atol", 1e-5);
    tol->min_match = kf_eval_num (t, "min_match", 0.99);
    tol->min_cosine = kf_eval_num (t, "min_cosine", 0.99985);
    memset (w, 0, sizeof *w);
    w->match_fraction = 1;
    w->cosine = 1;
}

int
kf_eval_compare_output (const kf_eval_tol_t *tol, kf_eval_worst_t *w,
                        const kf_eval_spec_t *s, const void *c, const void *ref,
                        const char *when, char *detail, size_t detail_size)
{
    size_t matched = 0, unwritten = 0;
    long nonfinite = 0;
    double dot = 0, nr = 0, nc = 0, max_abs = 0, max_rel = 0;
    for (size_t i = 0; i < s->numel; i++) {
        if (kf_eval_is_poison (s->dtype, c, i) && !kf_eval_is_poison (s->dtype, ref, i)) {
            unwritten++;
            continue;
        }
        double cv = s_get (s->dtype, c, i), rv = s_get (s->dtype, ref, i);
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
        if (rel_err < tol->rtol || abs_err <= tol->atol)
            matched++;
        dot += cv * rv;
        nr += rv * rv;
        nc += cv * cv;
    }
    double frac = s->numel ? (double) matched / (double) s->numel : 1;
    double cosine = nr == 0 && nc == 0 ? 1
                  : (nr == 0 || nc == 0) ? 0 : dot / sqrt (nr * nc);
    if (frac < w->match_fraction)
        w->match_fraction = frac;
    if (cosine < w->cosine)
        w->cosine = cosine;
    if (max_abs > w->max_abs)
        w->max_abs = max_abs;
    if (max_rel > w->max_rel)
        w->max_rel = max_rel;
    w->nonfinite_mismatch += nonfinite;
    if (unwritten)
        snprintf (detail, detail_size,
                  "%s: output '%s': %zu of %zu elements not written",
                  when, s->name, unwritten, s->numel);
    else if (nonfinite)
        snprintf (detail, detail_size,
                  "%s: output '%s': %ld NaN/Inf values where the reference has finite ones (or the reverse)",
                  when, s->name, nonfinite);
    else if (frac < tol->min_match)
        snprintf (detail, detail_size,
                  "%s: output '%s': %.2f%% of elements within tolerance (need %.2f%%; rtol %g, atol %g), max abs err %.3g, max rel err %.3g",
                  when, s->name, 100 * frac, 100 * tol->min_match, tol->rtol,
                  tol->atol, max_abs, max_rel);
    else if (cosine < tol->min_cosine)
        snprintf (detail, detail_size,
                  "%s: output '%s': cosine similarity %.6f below %.6f",
                  when, s->name, cosine, tol->min_cosine);
    else
        return 0;
    return -1;
}

json_t *
kf_eval_correctness_json (const kf_eval_worst_t *w)
{
    return json_pack ("{s:i, s:f, s:f, s:f, s:f, s:I}", "sets", w->sets,
                      "match_fraction", w->match_fraction,
                      "max_abs_err", isfinite (w->max_abs) ? w->max_abs : 1e308,
                      "max_rel_err", isfinite (w->max_rel) ? w->max_rel : 1e308,
                      "cosine", isfinite (w->cosine) ? w->cosine : 0.0,
                      "nonfinite_mismatch", (json_int_t) w->nonfinite_mismatch);
}

// --------------------------------------------------------------------------
//  Timing statistics

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double
s_quantile (const double *sorted, int n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (n - 1);
    int lo = (int) pos;
    int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

double
kf_eval_median (const double *v, int n)
{
    double *sorted = malloc ((size_t) (n > 0 ? n : 1) * sizeof *sorted);
    if (!sorted)
        return 0;
    memcpy (sorted, v, (size_t) (n > 0 ? n : 0) * sizeof *sorted);
    qsort (sorted, (size_t) (n > 0 ? n : 0), sizeof *sorted, s_cmp_double);
    double m = s_quantile (sorted, n, 0.5);
    free (sorted);
    return m;
}

json_t *
kf_eval_timing_json (const double *ns, int n, int calls)
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

double
kf_eval_paired_speedup (const double *ref, const double *cand, int n)
{
    double *ratio = malloc ((size_t) (n ? n : 1) * sizeof *ratio);
    if (!ratio)
        return -1;
    for (int i = 0; i < n; i++)
        ratio[i] = cand[i] > 0 ? ref[i] / cand[i] : 0;
    qsort (ratio, (size_t) n, sizeof *ratio, s_cmp_double);
    double m = s_quantile (ratio, n, 0.5);
    free (ratio);
    return m;
}

// --------------------------------------------------------------------------
//  Results

void
kf_eval_write_result (const char *dir, json_t *result)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/result.json", dir);
    json_dump_file (result, path, JSON_INDENT (1));
}

void
kf_eval_write_verdict (const char *dir, const char *verdict, const char *detail)
{
    json_t *r = json_pack ("{s:s, s:s}", "verdict", verdict, "detail", detail);
    kf_eval_write_result (dir, r);
    json_decref (r);
}

// --------------------------------------------------------------------------
//  Phase byte and fault handler

//  Everything the signal handler needs, set up before any kernel runs.
static char s_result_path[4200];
static volatile char *s_phase;
static struct { char *lo, *hi; } s_guards[256];
static volatile sig_atomic_t s_n_guards;

void
kf_eval_set_phase (char phase)
{
    if (s_phase)
        *s_phase = phase;
}

void
kf_eval_add_guard (void *lo, size_t len)
{
    if (s_n_guards < (int) (sizeof s_guards / sizeof s_guards[0])) {
        s_guards[s_n_guards].lo = lo;
        s_guards[s_n_guards].hi = (char *) lo + len;
        s_n_guards++;
    }
}

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

int
kf_eval_child_begin (const char *dir)
{
    snprintf (s_result_path, sizeof s_result_path, "%s/result.json", dir);
    //  The phase byte lives in a shared file mapping, so the parent can
    //  read it even after killing us mid-call.
    char path[4200];
    snprintf (path, sizeof path, "%s/phase", dir);
    int fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (ftruncate (fd, 1) != 0) {
        close (fd);
        return -1;
    }
    void *map = mmap (NULL, 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close (fd);
    if (map == MAP_FAILED)
        return -1;
    s_phase = map;
    *s_phase = 'H';

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
    return 0;
}
