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
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

//  Poison: a quiet NaN with a distinctive payload for floats (no kernel
//  computes it by accident), a fixed odd pattern for integers.
void
kf_eval_poison (int dtype, void *p, size_t n)
{
    switch (dtype) {
        case KF_F32: for (size_t i = 0; i < n; i++) ((uint32_t *) p)[i] = 0x7fc0dead; break;
        case KF_F64: for (size_t i = 0; i < n; i++) ((uint64_t *) p)[i] = 0x7ff8deaddeaddeadULL; break;
        case KF_F16: for (size_t i = 0; i < n; i++) ((uint16_t *) p)[i] = 0x7ead; break;
        case KF_BF16: for (size_t i = 0; i < n; i++) ((uint16_t *) p)[i] = 0x7fad; break;
        case KF_I32: for (size_t i = 0; i < n; i++) ((uint32_t *) p)[i] = 0xdeadbeef; break;
        case KF_I64: for (size_t i = 0; i < n; i++) ((uint64_t *) p)[i] = 0xdeadbeefdeadbeefULL; break;
    }
}

bool
kf_eval_is_poison (int dtype, const void *p, size_t i)
{
    return kf_elem_is_poison (dtype, p, i);
}

// --------------------------------------------------------------------------
//  Work over large tensors, in fixed blocks shared by a few threads
//
//  Drawing and comparing millions of elements on one core took most of a
//  small kernel's correctness pass (0.6 s for five sets of 1 M elements
//  on the H200's host). The blocks are fixed (S_BLOCK elements), so what
//  is computed per block, and the order partial sums are added in, does
//  not depend on how many threads there are; a thread that cannot be
//  started leaves its blocks to the calling one.

#define S_BLOCK ((size_t) 1 << 16)
#define S_MAX_THREADS 8

typedef void (s_block_fn) (void *arg, size_t block);

typedef struct {
    pthread_t thread;
    s_block_fn *fn;
    void *arg;
    size_t first, stride, n_blocks;
} s_team_t;

static void *
s_team_run (void *arg)
{
    s_team_t *t = arg;
    for (size_t b = t->first; b < t->n_blocks; b += t->stride)
        t->fn (t->arg, b);
    return NULL;
}

//  The CPUs this process may run on, at most S_MAX_THREADS: the child
//  shares the host with the worker and, on a GPU host, with the workers
//  of the other GPUs.
static int
s_cpus (void)
{
    cpu_set_t set;
    int n = sched_getaffinity (0, sizeof set, &set) == 0 ? CPU_COUNT (&set)
                                                          : (int) sysconf (_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > S_MAX_THREADS ? S_MAX_THREADS : n;
}

static void
s_parallel (size_t n_blocks, s_block_fn *fn, void *arg)
{
    size_t n = (size_t) s_cpus ();
    if (n > n_blocks)
        n = n_blocks;
    s_team_t team[S_MAX_THREADS];
    size_t started = 1;
    for (size_t k = 0; k < n; k++)
        team[k] = (s_team_t) { .fn = fn, .arg = arg, .first = k, .stride = n, .n_blocks = n_blocks };
    for (size_t k = 1; k < n; k++) {
        if (pthread_create (&team[k].thread, NULL, s_team_run, &team[k]) != 0)
            break;
        started++;
    }
    //  This thread's share, then the share of any thread that did not start.
    s_team_run (&team[0]);
    for (size_t k = started; k < n; k++)
        s_team_run (&team[k]);
    for (size_t k = 1; k < started; k++)
        pthread_join (team[k].thread, NULL);
}

static size_t
s_blocks (size_t n)
{
    return (n + S_BLOCK - 1) / S_BLOCK;
}

// --------------------------------------------------------------------------
//  Inputs

double
kf_eval_num (json_t *obj, const char *key, double dflt)
{
    json_t *v = json_object_get (obj, key);
    return json_is_number (v) ? json_number_value (v) : dflt;
}

typedef struct {
    kf_elem_dist_t dist;
    int dtype;
    void *p;
    size_t n;
    uint64_t seed;
} s_fill_t;

static void
s_fill_block (void *arg, size_t block)
{
    const s_fill_t *f = arg;
    size_t lo = block * S_BLOCK, hi = lo + S_BLOCK < f->n ? lo + S_BLOCK : f->n;
    for (size_t i = lo; i < hi; i++)
        kf_elem_set (f->dtype, f->p, i, kf_elem_draw (&f->dist, f->seed, i));
}

void
kf_eval_dist (json_t *dist, kf_elem_dist_t *d)
{
    memset (d, 0, sizeof *d);
    const char *kind = json_string_value (json_object_get (dist, "kind"));
    if (!kind)
        kind = "normal";
    if (strcmp (kind, "uniform") == 0) {
        d->kind = KF_DIST_UNIFORM;
        d->a = kf_eval_num (dist, "low", -1);
        d->b = kf_eval_num (dist, "high", 1);
        d->draws = 1;
    }
    else if (strcmp (kind, "constant") == 0) {
        d->kind = KF_DIST_CONSTANT;
        d->a = kf_eval_num (dist, "value", 0);
        d->draws = 0;
    }
    else if (strcmp (kind, "heavy_tail") == 0) {
        d->kind = KF_DIST_HEAVY;
        d->dof = (int) kf_eval_num (dist, "dof", 3);
        if (d->dof < 1)
            d->dof = 1;
        if (d->dof > 64)
            d->dof = 64;
        d->a = kf_eval_num (dist, "scale", 1);
        d->draws = 2 * ((uint64_t) d->dof + 1);        // dof + 1 normals, two draws each
    }
    else {
        d->kind = KF_DIST_NORMAL;
        d->a = kf_eval_num (dist, "mean", 0);
        d->b = kf_eval_num (dist, "std", 1);
        d->draws = 2;
    }
}

void
kf_eval_fill (json_t *dist, int dtype, void *p, size_t n, uint64_t seed)
{
    s_fill_t f = { .dtype = dtype, .p = p, .n = n, .seed = seed };
    kf_eval_dist (dist, &f.dist);
    s_parallel (s_blocks (n), s_fill_block, &f);
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
    tol->atol = kf_task_atol (task, KF_F32);
    for (int d = 0; d < 6; d++)
        tol->atol_dtype[d] = kf_task_atol (task, d);
    (void) t;
    tol->min_match = kf_eval_num (t, "min_match", 0.99);
    tol->min_cosine = kf_eval_num (t, "min_cosine", 0.99985);
    memset (w, 0, sizeof *w);
    w->match_fraction = 1;
    w->cosine = 1;
}

typedef struct {
    int dtype;
    const void *c, *ref;
    size_t n;
    double rtol, atol;
    kf_elem_part_t *parts;   // one block's share each
} s_cmp_t;

static void
s_cmp_range (const s_cmp_t *k, size_t block, kf_elem_part_t *p)
{
    memset (p, 0, sizeof *p);
    size_t lo = block * S_BLOCK, hi = lo + S_BLOCK < k->n ? lo + S_BLOCK : k->n;
    if (k->dtype == KF_F32) {
        //  The common case without a dtype switch per element; the same
        //  tests as kf_elem_check.
        const uint32_t *cb = k->c, *rb = k->ref;
        const float *cf = k->c, *rf = k->ref;
        for (size_t i = lo; i < hi; i++) {
            if (cb[i] == 0x7fc0dead && rb[i] != 0x7fc0dead)
                p->unwritten++;
            else
                kf_elem_compare (p, cf[i], rf[i], k->rtol, k->atol);
        }
        return;
    }
    for (size_t i = lo; i < hi; i++)
        kf_elem_check (p, k->dtype, k->c, k->ref, i, k->rtol, k->atol);
}

static void
s_cmp_block (void *arg, size_t block)
{
    const s_cmp_t *k = arg;
    s_cmp_range (k, block, &k->parts[block]);
}

double
kf_eval_atol (const kf_eval_tol_t *tol, int dtype)
{
    return dtype >= 0 && dtype < 6 ? tol->atol_dtype[dtype] : tol->atol;
}

int
kf_eval_compare_output (const kf_eval_tol_t *tol, kf_eval_worst_t *w,
                        const kf_eval_spec_t *s, const void *c, const void *ref,
                        const char *when, char *detail, size_t detail_size)
{
    size_t n_blocks = s_blocks (s->numel);
    kf_elem_part_t sum, one;
    memset (&sum, 0, sizeof sum);
    s_cmp_t k = { s->dtype, c, ref, s->numel, tol->rtol, kf_eval_atol (tol, s->dtype), NULL };
    k.parts = n_blocks > 1 ? malloc (n_blocks * sizeof *k.parts) : NULL;
    if (k.parts) {
        s_parallel (n_blocks, s_cmp_block, &k);
        for (size_t b = 0; b < n_blocks; b++)
            kf_elem_merge (&sum, &k.parts[b]);
        free (k.parts);
    }
    else
        //  One block (or no memory for the partial sums): here, in order.
        for (size_t b = 0; b < n_blocks; b++) {
            s_cmp_range (&k, b, &one);
            kf_elem_merge (&sum, &one);
        }
    return kf_eval_judge_output (tol, w, s, &sum, when, detail, detail_size);
}

int
kf_eval_judge_output (const kf_eval_tol_t *tol, kf_eval_worst_t *w, const kf_eval_spec_t *s,
                      const kf_elem_part_t *sum, const char *when, char *detail,
                      size_t detail_size)
{
    double atol = kf_eval_atol (tol, s->dtype);
    double frac = s->numel ? (double) sum->matched / (double) s->numel : 1;
    double cosine = sum->nr == 0 && sum->nc == 0 ? 1
                  : (sum->nr == 0 || sum->nc == 0) ? 0 : sum->dot / sqrt (sum->nr * sum->nc);
    if (frac < w->match_fraction)
        w->match_fraction = frac;
    if (cosine < w->cosine)
        w->cosine = cosine;
    if (sum->max_abs > w->max_abs)
        w->max_abs = sum->max_abs;
    if (sum->max_rel > w->max_rel)
        w->max_rel = sum->max_rel;
    w->nonfinite_mismatch += (long) sum->nonfinite;
    if (sum->unwritten)
        snprintf (detail, detail_size,
                  "%s: output '%s': %llu of %zu elements not written",
                  when, s->name, (unsigned long long) sum->unwritten, s->numel);
    else if (sum->nonfinite)
        snprintf (detail, detail_size,
                  "%s: output '%s': %llu NaN/Inf values where the reference has finite ones (or the reverse)",
                  when, s->name, (unsigned long long) sum->nonfinite);
    else if (frac < tol->min_match)
        snprintf (detail, detail_size,
                  "%s: output '%s': %.2f%% of elements within tolerance (need %.2f%%; rtol %g, atol %g), max abs err %.3g, max rel err %.3g",
                  when, s->name, 100 * frac, 100 * tol->min_match, tol->rtol,
                  atol, sum->max_abs, sum->max_rel);
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

json_t *
kf_eval_phases_json (double spawn, const double stamps[KF_EVAL_T_N], double end)
{
    static const char *const names[] = { "child_start", "load", "correctness", "timing",
                                         "report" };
    //  Phase k runs from the end of phase k-1 (the spawn for the first) to
    //  its own stamp; one the child died in runs to END.
    json_t *o = json_object ();
    double from = spawn;
    for (int k = 0; k < KF_EVAL_T_N; k++) {
        double to = stamps[k] > 0 ? stamps[k] : 0;
        double took = 0;
        if (from > 0) {
            bool next_started = false;
            for (int j = k + 1; j < KF_EVAL_T_N; j++)
                next_started |= stamps[j] > 0;
            took = to > 0 ? to - from : next_started ? 0 : end - from;
        }
        json_object_set_new (o, names[k], json_real (took > 0 ? round (took * 1e6) / 1e6 : 0));
        from = to > 0 ? to : 0;
    }
    double reported = stamps[KF_EVAL_T_REPORTED];
    double exit_s = reported > 0 && end > reported ? end - reported : 0;
    json_object_set_new (o, "exit", json_real (round (exit_s * 1e6) / 1e6));
    return o;
}

// --------------------------------------------------------------------------
//  The harness's own time, per step

static double s_split[KF_EVAL_S_N];

void
kf_eval_split_add (int which, double seconds)
{
    if (which >= 0 && which < KF_EVAL_S_N && seconds > 0)
        s_split[which] += seconds;
}

json_t *
kf_eval_split_json (void)
{
    static const char *const names[KF_EVAL_S_N] = { "context", "modules", "device", "ceilings",
                                                    "inputs", "copies", "calls", "compare" };
    json_t *o = json_object ();
    for (int k = 0; k < KF_EVAL_S_N; k++)
        json_object_set_new (o, names[k], json_real (round (s_split[k] * 1e6) / 1e6));
    return o;
}

// --------------------------------------------------------------------------
//  The warm-up floor, counting the correctness pass's calls

void
kf_eval_warm_count (kf_eval_warm_t *w, bool ref, double started)
{
    if (w->since <= 0)
        w->since = started;
    if (ref)
        w->ref_calls++;
    else
        w->cand_calls++;
}

int
kf_eval_warm_counted (const kf_eval_warm_t *w, bool paired)
{
    if (!paired)
        return w->cand_calls;
    return w->ref_calls < w->cand_calls ? w->ref_calls : w->cand_calls;
}

bool
kf_eval_warm_more (const kf_eval_warm_t *w, bool paired, int topup, double now,
                   double warmup_s, int warmup_calls)
{
    if (topup < 1)
        return true;
    int calls = kf_eval_warm_counted (w, paired) + topup;
    return calls < warmup_calls || now - w->since < warmup_s;
}

// --------------------------------------------------------------------------
//  Shape cases

int
kf_eval_n_cases (json_t *task)
{
    return 1 + (int) json_array_size (json_object_get (task, "shapes"));
}

json_t *
kf_eval_case_task (json_t *task, int k)
{
    if (k == 0)
        return json_incref (task);
    json_t *one = json_array_get (json_object_get (task, "shapes"), (size_t) k - 1);
    if (!json_is_object (one))
        return NULL;
    json_t *copy = json_deep_copy (task);
    const char *lists[] = { "inputs", "outputs" };
    for (int l = 0; l < 2; l++) {
        json_t *list = json_object_get (copy, lists[l]);
        for (size_t i = 0; i < json_array_size (list); i++) {
            json_t *t = json_array_get (list, i);
            json_t *shape = json_object_get (one, json_string_value (json_object_get (t, "name")));
            if (json_is_array (shape))
                json_object_set_new (t, "shape", json_deep_copy (shape));
        }
    }
    return copy;
}

void
kf_eval_case_label (json_t *task, int k, char *buf, size_t size)
{
    json_t *one = json_array_get (json_object_get (task, "shapes"), (size_t) k - 1);
    size_t len = (size_t) snprintf (buf, size, "shape case %d (", k);
    const char *name;
    json_t *shape;
    bool first = true;
    json_object_foreach (one, name, shape) {
        char *dims = json_dumps (shape, JSON_COMPACT);
        if (len < size)
            len += (size_t) snprintf (buf + len, size - len, "%s%s %s", first ? "" : ", ", name,
                                      dims ? dims : "?");
        free (dims);
        first = false;
    }
    if (len < size)
        snprintf (buf + len, size - len, ")");
}

// --------------------------------------------------------------------------
//  Degenerate outputs

uint64_t
kf_eval_hash (const void *p, size_t n, uint64_t h)
{
    //  FNV-1a over bytes: a fingerprint to tell sets apart, not security.
    const unsigned char *b = p;
    if (!h)
        h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

void
kf_eval_degen_init (kf_eval_degen_t *d, int n_out)
{
    memset (d, 0, sizeof *d);
    d->n_out = n_out < KF_EVAL_MAX_OUT ? n_out : KF_EVAL_MAX_OUT;
    for (int o = 0; o < d->n_out; o++)
        d->out[o].all_constant = true;
}

void
kf_eval_degen_inputs (kf_eval_degen_t *d, uint64_t inputs_hash)
{
    if (d->sets == 0)
        d->in_hash = inputs_hash;
    else if (inputs_hash != d->in_hash)
        d->in_differs = true;
}

void
kf_eval_degen_output (kf_eval_degen_t *d, int o, const kf_eval_spec_t *s,
                      const void *data, double atol)
{
    if (o >= d->n_out)
        return;
    size_t esize = kf_dtype_size (s->dtype);
    uint64_t h = kf_eval_hash (data, s->bytes, 0);
    if (d->sets == 0)
        d->out[o].hash = h;
    else if (h != d->out[o].hash)
        d->out[o].differs = true;
    d->out[o].name = s->name;
    d->out[o].atol = atol;
    //  Constant: more than one element, all bitwise equal to the first.
    if (s->numel <= 1)
        d->out[o].all_constant = false;
    for (size_t i = 1; i < s->numel && d->out[o].all_constant; i++)
        if (memcmp ((const char *) data + i * esize, data, esize) != 0)
            d->out[o].all_constant = false;
    if (s->numel)
        d->out[o].value = kf_elem_get (s->dtype, data, 0);
    for (size_t i = 0; i < s->numel; i++) {
        double v = kf_elem_get (s->dtype, data, i);
        if (isfinite (v)) {
            d->out[o].any_finite = true;
            if (fabs (v) > d->out[o].max_mag)
                d->out[o].max_mag = fabs (v);
        }
    }
}

void
kf_eval_degen_end_set (kf_eval_degen_t *d)
{
    d->sets++;
}

json_t *
kf_eval_degen_json (const kf_eval_degen_t *d)
{
    json_t *reasons = json_array ();
    char line[256];
    for (int o = 0; o < d->n_out && d->sets > 0; o++) {
        const char *name = d->out[o].name ? d->out[o].name : "?";
        if (!d->out[o].any_finite) {
            snprintf (line, sizeof line, "output %d ('%s'): no finite element in any set", o, name);
            json_array_append_new (reasons, json_string (line));
            continue;
        }
        if (d->out[o].all_constant) {
            snprintf (line, sizeof line, "output %d ('%s'): constant (every element is %g)", o,
                      name, d->out[o].value);
            json_array_append_new (reasons, json_string (line));
        }
        if (d->sets >= 2 && !d->out[o].differs) {
            snprintf (line, sizeof line, "output %d ('%s'): the same in every input set", o, name);
            json_array_append_new (reasons, json_string (line));
        }
        if (d->out[o].max_mag <= d->out[o].atol) {
            snprintf (line, sizeof line,
                      "output %d ('%s'): every element is within the absolute bound %g of 0", o,
                      name, d->out[o].atol);
            json_array_append_new (reasons, json_string (line));
        }
    }
    if (d->sets >= 2 && !d->in_differs)
        json_array_append_new (reasons, json_string ("inputs: identical in every set"));
    return reasons;
}

// --------------------------------------------------------------------------
//  Ceilings and the roofline

//  Each thread copies up to 64 MiB, all of them together at most about
//  1 GiB of buffers (source and destination), so a many-core host does not
//  pay gigabytes for its start-up measurement; never under 8 MiB, so the
//  copy still runs from memory, not from a core's cache.
#define S_CEIL_COPY_MAX ((size_t) 64 << 20)
#define S_CEIL_COPY_MIN ((size_t) 8 << 20)
static size_t s_ceil_copy = S_CEIL_COPY_MAX;
#define S_CEIL_COPY s_ceil_copy
#define S_FMA_CHAINS 12

//  Independent FMA chains in the widest vector unit, so the loop is bound
//  by FMA throughput, not latency. Each returns the flops it did.
#if defined(__x86_64__)
__attribute__ ((target ("avx512f"))) static double
s_fma_avx512 (long iters, float *sink)
{
    __m512 acc[S_FMA_CHAINS], a = _mm512_set1_ps (0.999999f), b = _mm512_set1_ps (1e-7f);
    for (int k = 0; k < S_FMA_CHAINS; k++)
        acc[k] = _mm512_set1_ps ((float) k);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_FMA_CHAINS; k++)
            acc[k] = _mm512_fmadd_ps (acc[k], a, b);
    float out[16];
    for (int k = 1; k < S_FMA_CHAINS; k++)
        acc[0] = _mm512_add_ps (acc[0], acc[k]);
    _mm512_storeu_ps (out, acc[0]);
    *sink += out[0];
    return 2.0 * 16 * S_FMA_CHAINS * (double) iters;
}

__attribute__ ((target ("avx2,fma"))) static double
s_fma_avx2 (long iters, float *sink)
{
    __m256 acc[S_FMA_CHAINS], a = _mm256_set1_ps (0.999999f), b = _mm256_set1_ps (1e-7f);
    for (int k = 0; k < S_FMA_CHAINS; k++)
        acc[k] = _mm256_set1_ps ((float) k);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_FMA_CHAINS; k++)
            acc[k] = _mm256_fmadd_ps (acc[k], a, b);
    float out[8];
    for (int k = 1; k < S_FMA_CHAINS; k++)
        acc[0] = _mm256_add_ps (acc[0], acc[k]);
    _mm256_storeu_ps (out, acc[0]);
    *sink += out[0];
    return 2.0 * 8 * S_FMA_CHAINS * (double) iters;
}
#endif

static double
s_fma_plain (long iters, float *sink)
{
    float acc[S_FMA_CHAINS][4];
    for (int k = 0; k < S_FMA_CHAINS; k++)
        for (int l = 0; l < 4; l++)
            acc[k][l] = (float) (k + l);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_FMA_CHAINS; k++)
            for (int l = 0; l < 4; l++)
                acc[k][l] = acc[k][l] * 0.999999f + 1e-7f;
    for (int k = 0; k < S_FMA_CHAINS; k++)
        *sink += acc[k][0];
    return 2.0 * 4 * S_FMA_CHAINS * (double) iters;
}

typedef struct {
    pthread_t thread;
    char *src, *dst;
    double copy_s, flops, fma_s;
    const char *isa;
} s_ceil_worker_t;

static pthread_barrier_t s_ceil_barrier;

static void *
s_ceil_run (void *arg)
{
    s_ceil_worker_t *w = arg;
    float sink = 0;
    double (*fma) (long, float *) = s_fma_plain;
    w->isa = "sse";
#if defined(__x86_64__)
    __builtin_cpu_init ();
    if (__builtin_cpu_supports ("avx512f")) {
        fma = s_fma_avx512;
        w->isa = "avx512f";
    }
    else if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")) {
        fma = s_fma_avx2;
        w->isa = "avx2+fma";
    }
#endif
    //  Every thread copies at once (the memory system's ceiling, not one
    //  core's), the best of three; then the FMA loop, the best of three.
    w->copy_s = INFINITY;
    for (int r = 0; r < 3; r++) {
        pthread_barrier_wait (&s_ceil_barrier);
        double t0 = kf_eval_now ();
        if (w->src)
            memcpy (w->dst, w->src, S_CEIL_COPY);
        double t = kf_eval_now () - t0;
        if (t < w->copy_s)
            w->copy_s = t;
    }
    w->fma_s = INFINITY;
    for (int r = 0; r < 3; r++) {
        pthread_barrier_wait (&s_ceil_barrier);
        double t0 = kf_eval_now ();
        double f = fma (200000, &sink);
        double t = kf_eval_now () - t0;
        if (t < w->fma_s) {
            w->fma_s = t;
            w->flops = f;
        }
    }
    volatile float keep = sink;
    (void) keep;
    return NULL;
}

static kf_eval_ceilings_t s_host_ceil;
static pthread_once_t s_host_ceil_once = PTHREAD_ONCE_INIT;

static void
s_measure_host (void)
{
    long cores = sysconf (_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    if (cores > 256)
        cores = 256;
    s_ceil_worker_t *w = calloc ((size_t) cores, sizeof *w);
    if (!w)
        return;
    s_ceil_copy = ((size_t) 512 << 20) / (size_t) cores;
    if (s_ceil_copy > S_CEIL_COPY_MAX)
        s_ceil_copy = S_CEIL_COPY_MAX;
    if (s_ceil_copy < S_CEIL_COPY_MIN)
        s_ceil_copy = S_CEIL_COPY_MIN;
    pthread_barrier_init (&s_ceil_barrier, NULL, (unsigned) cores);
    long started = 0;
    for (long i = 0; i < cores; i++) {
        w[i].src = malloc (S_CEIL_COPY);
        w[i].dst = malloc (S_CEIL_COPY);
        if (!w[i].src || !w[i].dst) {
            free (w[i].src);
            free (w[i].dst);
            w[i].src = w[i].dst = NULL;
        }
        else {
            memset (w[i].src, 1, S_CEIL_COPY);
            memset (w[i].dst, 2, S_CEIL_COPY);
        }
    }
    //  Thread 0 is this one, so a failed pthread_create cannot leave the
    //  barrier waiting for a thread that never came.
    for (long i = 1; i < cores; i++) {
        if (pthread_create (&w[i].thread, NULL, s_ceil_run, &w[i]) != 0)
            break;
        started = i;
    }
    if (started == cores - 1) {
        s_ceil_run (&w[0]);
        double bytes = 0, flops = 0, copy_s = 0, fma_s = 0;
        for (long i = 0; i < cores; i++) {
            if (w[i].src)
                bytes += 2.0 * S_CEIL_COPY;
            flops += w[i].flops;
            copy_s = w[i].copy_s > copy_s ? w[i].copy_s : copy_s;
            fma_s = w[i].fma_s > fma_s ? w[i].fma_s : fma_s;
        }
        //  Each core's best rate summed: the ceiling, not a typical rate.
        double gflops = 0;
        for (long i = 0; i < cores; i++)
            gflops += w[i].fma_s > 0 ? w[i].flops / w[i].fma_s / 1e9 : 0;
        s_host_ceil.copy_gbs = copy_s > 0 ? bytes / copy_s / 1e9 : 0;
        s_host_ceil.peak_gflops = gflops;
        s_host_ceil.peak_source = w[0].isa;
        (void) flops;
        (void) fma_s;
    }
    else {
        //  No threads: nothing measured; callers see zeros and skip the
        //  ceilings rather than judge against a wrong one.
        for (long i = 1; i <= started; i++)
            pthread_cancel (w[i].thread);
    }
    for (long i = 1; i <= started; i++)
        pthread_join (w[i].thread, NULL);
    for (long i = 0; i < cores; i++) {
        free (w[i].src);
        free (w[i].dst);
    }
    pthread_barrier_destroy (&s_ceil_barrier);
    free (w);
}

void
kf_eval_host_ceilings (kf_eval_ceilings_t *c)
{
    pthread_once (&s_host_ceil_once, s_measure_host);
    *c = s_host_ceil;
}

//  The plausibility rules are common/kf_plausible.c's, which the
//  coordinator decides by; this is the worker's report of them.
#include "kf_plausible.h"

void
kf_eval_roofline (json_t *result, double bytes, double flops, double cand_ns,
                  double ref_ns, const kf_eval_ceilings_t *c, bool bw_applies,
                  double speedup)
{
    //  Speed against the reference is no sign of anything by itself: a
    //  slow reference (PyTorch eager on a CPU) is honestly beaten 50x. The
    //  run's distribution, the other rule, is the coordinator's to judge.
    (void) speedup;
    kf_plausible_figures_t f = { .bytes = bytes, .flops = flops, .cand_ns = cand_ns,
                                 .copy_gbs = c->copy_gbs, .peak_gflops = c->peak_gflops,
                                 .bw_applies = bw_applies };
    double cand_gbs = kf_plausible_gbs (&f);
    double ref_gbs = ref_ns > 0 ? bytes / ref_ns : 0;   // bytes per ns = GB/s
    json_object_set_new (result, "bandwidth", json_pack (
        "{s:f, s:f, s:f, s:f, s:b, s:f}", "bytes", bytes,
        "candidate_gbs", cand_gbs, "reference_gbs", ref_gbs,
        "copy_gbs", c->copy_gbs, "roofline_applies", bw_applies,
        "candidate_fraction_of_copy", c->copy_gbs > 0 ? cand_gbs / c->copy_gbs : 0));
    double cand_gf = kf_plausible_gflops (&f);
    double ref_gf = flops > 0 && ref_ns > 0 ? flops / ref_ns : 0;   // flops per ns = GFLOP/s
    json_t *compute = json_object ();
    json_object_set_new (compute, "flops", flops > 0 ? json_real (flops) : json_null ());
    json_object_set_new (compute, "candidate_gflops", flops > 0 ? json_real (cand_gf) : json_null ());
    json_object_set_new (compute, "reference_gflops",
                         flops > 0 && ref_ns > 0 ? json_real (ref_gf) : json_null ());
    json_object_set_new (compute, "peak_gflops", json_real (c->peak_gflops));
    json_object_set_new (compute, "peak_source", json_string (c->peak_source ? c->peak_source : "none"));
    json_object_set_new (compute, "candidate_fraction_of_peak",
                         flops > 0 && c->peak_gflops > 0 ? json_real (cand_gf / c->peak_gflops)
                                                         : json_null ());
    json_object_set_new (result, "compute", compute);
    char reason[256] = "";
    bool suspect = kf_plausible_ceiling (&f, KF_PLAUSIBLE_MARGIN, reason, sizeof reason);
    json_object_set_new (result, "audit", json_boolean (suspect));
    if (suspect) {
        json_object_set_new (result, "audit_reason", json_string (reason));
        //  Into the detail too, which the coordinator stores as the
        //  candidate's verdict line: a flagged speedup is never silent.
        const char *was = json_string_value (json_object_get (result, "detail"));
        char detail[512];
        snprintf (detail, sizeof detail, "%s; flagged for audit: %s", was ? was : "", reason);
        json_object_set_new (result, "detail", json_string (detail));
    }
}

// --------------------------------------------------------------------------
//  Exported PyTorch data

static bool
s_shape_equal (json_t *a, json_t *b)
{
    if (json_array_size (a) != json_array_size (b))
        return false;
    for (size_t i = 0; i < json_array_size (a); i++)
        if (!json_is_integer (json_array_get (a, i))
            || json_integer_value (json_array_get (a, i)) != json_integer_value (json_array_get (b, i)))
            return false;
    return true;
}

//  Checks manifest entry E against task tensor SPEC and the frame.
static int
s_refdata_entry (json_t *e, json_t *spec, const char *what, int idx, size_t data_size,
                 size_t *off, char *why, size_t why_size)
{
    kf_eval_spec_t s;
    if (kf_eval_spec (&s, spec, why, why_size))
        return -1;
    const char *dt = json_string_value (json_object_get (e, "dtype"));
    char *want = json_dumps (json_object_get (spec, "shape"), JSON_COMPACT);
    char *got = json_dumps (json_object_get (e, "shape"), JSON_COMPACT);
    int rc = 0;
    if (!dt || kf_dtype_from_name (dt) != s.dtype
        || !s_shape_equal (json_object_get (e, "shape"), json_object_get (spec, "shape"))) {
        snprintf (why, why_size,
                  "reference_data: task %s %d ('%s') is %s %s but the data has %s %s ('%s')",
                  what, idx, s.name, kf_dtype_name (s.dtype), want ? want : "?",
                  dt ? dt : "?", got ? got : "?",
                  json_string_value (json_object_get (e, "name")) ? json_string_value (json_object_get (e, "name")) : "?");
        rc = -1;
    }
    free (want);
    free (got);
    if (rc)
        return -1;
    json_t *o = json_object_get (e, "offset"), *b = json_object_get (e, "bytes");
    if (!json_is_integer (o) || !json_is_integer (b) || json_integer_value (o) < 0
        || (size_t) json_integer_value (b) != s.bytes
        || (size_t) json_integer_value (o) > data_size
        || data_size - (size_t) json_integer_value (o) < s.bytes) {
        snprintf (why, why_size, "reference_data: %s %d ('%s'): %zu bytes at offset %lld do not lie in the %zu-byte frame",
                  what, idx, s.name, s.bytes, (long long) json_integer_value (o), data_size);
        return -1;
    }
    *off = (size_t) json_integer_value (o);
    return 0;
}

int
kf_eval_refdata_parse (kf_eval_refdata_t *r, json_t *task, json_t *refdata,
                       size_t data_size, char *why, size_t why_size)
{
    memset (r, 0, sizeof *r);
    json_t *tensors = json_object_get (refdata, "tensors");
    json_t *scalars = json_object_get (refdata, "scalars");
    json_t *sets = json_object_get (refdata, "sets");
    json_t *eager = json_object_get (refdata, "eager_ns");
    json_t *compiled = json_object_get (refdata, "compiled_ns");
    if (!json_is_array (tensors) || !json_is_integer (sets) || json_integer_value (sets) < 1
        || json_integer_value (sets) > 100 || !json_is_number (eager)
        || json_number_value (eager) <= 0 || (scalars && !json_is_array (scalars))
        || (compiled && !json_is_null (compiled) && !json_is_number (compiled))) {
        snprintf (why, why_size, "reference_data: needs tensors (array), sets (1..100), eager_ns (> 0), and optionally scalars (array) and compiled_ns (number or null)");
        return -1;
    }
    r->n_sets = (int) json_integer_value (sets);
    r->eager_ns = json_number_value (eager);
    r->compiled_ns = json_is_number (compiled) && json_number_value (compiled) > 0
                     ? json_number_value (compiled) : -1;
    json_t *ins = json_object_get (task, "inputs"), *outs = json_object_get (task, "outputs");
    r->n_in = (int) json_array_size (ins);
    r->n_out = (int) json_array_size (outs);
    r->in_off = calloc ((size_t) (r->n_sets * r->n_in + 1), sizeof *r->in_off);
    r->out_off = calloc ((size_t) (r->n_sets * r->n_out + 1), sizeof *r->out_off);
    if (!r->in_off || !r->out_off) {
        snprintf (why, why_size, "reference_data: out of memory");
        goto fail;
    }
    for (int set = 0; set < r->n_sets; set++) {
        //  in[]: this set's inputs by index, then params, then buffers;
        //  out[]: this set's outputs by index. The manifest lists each
        //  group in index order already; sort defensively by index.
        json_t *groups[4] = { json_array (), json_array (), json_array (), json_array () };
        size_t i;
        json_t *e;
        json_array_foreach (tensors, i, e) {
            const char *role = json_string_value (json_object_get (e, "role"));
            json_t *es = json_object_get (e, "set");
            bool this_set = json_is_integer (es) && json_integer_value (es) == set;
            int g = !role ? -1
                  : !strcmp (role, "input") && this_set ? 0
                  : !strcmp (role, "param") ? 1
                  : !strcmp (role, "buffer") ? 2
                  : !strcmp (role, "output") && this_set ? 3 : -1;
            if (g < 0)
                continue;
            //  Insert by index.
            json_int_t idx = json_integer_value (json_object_get (e, "index"));
            size_t at = json_array_size (groups[g]);
            while (at > 0 && json_integer_value (json_object_get (json_array_get (groups[g], at - 1), "index")) > idx)
                at--;
            json_array_insert (groups[g], at, e);
        }
        size_t n_in = json_array_size (groups[0]) + json_array_size (groups[1]) + json_array_size (groups[2]);
        int rc = 0;
        if ((int) n_in != r->n_in || (int) json_array_size (groups[3]) != r->n_out) {
            snprintf (why, why_size,
                      "reference_data: set %d has %zu inputs, %zu parameters, %zu buffers and %zu outputs; the task declares %d inputs and %d outputs",
                      set, json_array_size (groups[0]), json_array_size (groups[1]),
                      json_array_size (groups[2]), json_array_size (groups[3]), r->n_in, r->n_out);
            rc = -1;
        }
        int k = 0;
        for (int g = 0; g < 3 && !rc; g++)
            for (size_t j = 0; j < json_array_size (groups[g]) && !rc; j++, k++)
                rc = s_refdata_entry (json_array_get (groups[g], j), json_array_get (ins, (size_t) k),
                                      "input", k, data_size, &r->in_off[set * r->n_in + k],
                                      why, why_size);
        for (size_t j = 0; j < json_array_size (groups[3]) && !rc; j++)
            rc = s_refdata_entry (json_array_get (groups[3], j), json_array_get (outs, j), "output",
                                  (int) j, data_size, &r->out_off[set * r->n_out + (int) j],
                                  why, why_size);
        for (int g = 0; g < 4; g++)
            json_decref (groups[g]);
        if (rc)
            goto fail;
    }

    //  Scalars: numeric `input` ones of set 0 give the names (in<index>),
    //  then every numeric `init` (init<index>); booleans count as 1 / 0.
    size_t n_sc = json_array_size (scalars);
    r->names = calloc (n_sc + 1, sizeof *r->names);
    r->name_ptrs = calloc (n_sc + 1, sizeof *r->name_ptrs);
    r->values = calloc ((size_t) r->n_sets * (n_sc + 1), sizeof *r->values);
    if (!r->names || !r->name_ptrs || !r->values) {
        snprintf (why, why_size, "reference_data: out of memory");
        goto fail;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t i;
        json_t *e;
        json_array_foreach (scalars, i, e) {
            const char *role = json_string_value (json_object_get (e, "role"));
            json_t *v = json_object_get (e, "value");
            json_t *es = json_object_get (e, "set");
            if (!role || !(json_is_number (v) || json_is_boolean (v)))
                continue;
            char name[24];
            if (pass == 0 && !strcmp (role, "input") && json_is_integer (es)
                && json_integer_value (es) == 0)
                snprintf (name, sizeof name, "in%lld", (long long) json_integer_value (json_object_get (e, "index")));
            else if (pass == 1 && !strcmp (role, "init"))
                snprintf (name, sizeof name, "init%lld", (long long) json_integer_value (json_object_get (e, "index")));
            else
                continue;
            snprintf (r->names[r->n_scalars], sizeof r->names[0], "%s", name);
            r->name_ptrs[r->n_scalars] = r->names[r->n_scalars];
            r->n_scalars++;
        }
    }
    for (int set = 0; set < r->n_sets; set++)
        for (int k = 0; k < r->n_scalars; k++) {
            bool init = strncmp (r->names[k], "init", 4) == 0;
            long long idx = atoll (r->names[k] + (init ? 4 : 2));
            double value = NAN;
            size_t i;
            json_t *e;
            json_array_foreach (scalars, i, e) {
                const char *role = json_string_value (json_object_get (e, "role"));
                json_t *es = json_object_get (e, "set");
                if (!role || strcmp (role, init ? "init" : "input") != 0
                    || json_integer_value (json_object_get (e, "index")) != idx
                    || (!init && (!json_is_integer (es) || json_integer_value (es) != set)))
                    continue;
                json_t *v = json_object_get (e, "value");
                value = json_is_boolean (v) ? (json_is_true (v) ? 1 : 0) : json_number_value (v);
            }
            r->values[(size_t) set * (size_t) r->n_scalars + (size_t) k] = value;
        }
    return 0;
fail:
    kf_eval_refdata_free (r);
    return -1;
}

void
kf_eval_refdata_free (kf_eval_refdata_t *r)
{
    free (r->in_off);
    free (r->out_off);
    free (r->names);
    free (r->name_ptrs);
    free (r->values);
    memset (r, 0, sizeof *r);
}
