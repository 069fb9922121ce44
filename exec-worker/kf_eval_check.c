/*  kf_eval_check.c - what a right answer is, the same for every backend:
 *  inputs drawn and poisoned, tensors parsed, the task's shape cases, and
 *  each output compared with the reference into the verdict's figures.
 *
 *  Moved out of the host harness so that a device backend judges a
 *  candidate by exactly the same rules: it copies its tensors to the
 *  host and calls the same comparison, so "correct" means one thing
 *  whichever device ran the kernel. The rest of kf_eval_check.h lives
 *  beside it: timing statistics and the warm-up (kf_eval_stats.c), the
 *  degenerate-output probe (kf_eval_degen.c), ceilings and the roofline
 *  (kf_eval_roofline.c), exported PyTorch data (kf_eval_refdata.c).
 */
#include "kf_eval_check.h"
#include "kf_msg_eval.h"
#include "kf_task.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//  Poison: a quiet NaN with a distinctive payload for floats (no kernel
//  computes it by accident), a fixed odd pattern for integers.
void
kf_eval_poison (int dtype, void *p, size_t n)
{
    uint64_t v64 = 0;
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    switch (dtype) {
        case KF_F32: v32 = 0x7fc0dead; break;
        case KF_F64: v64 = 0x7ff8deaddeaddeadULL; break;
        case KF_F16: v16 = 0x7ead; break;
        case KF_BF16: v16 = 0x7fad; break;
        case KF_I32: v32 = 0xdeadbeef; break;
        case KF_I64: v64 = 0xdeadbeefdeadbeefULL; break;
        default: return;
    }
    size_t size = kf_dtype_size (dtype);
    if (n == 0 || size == 0)
        return;
    //  One element, then what is written so far copied after itself:
    //  memcpy writes it at memory speed, a loop of element stores (checked
    //  one by one under the sanitizers) took ten times as long.
    size_t total = n * size, done = size;
    memcpy (p, size == 8 ? (void *) &v64 : size == 4 ? (void *) &v32 : (void *) &v16, size);
    while (done < total) {
        size_t k = done < total - done ? done : total - done;
        memcpy ((char *) p + done, p, k);
        done += k;
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

//  Fewer blocks than this are done by the calling thread alone: every
//  timed sample compares its outputs, and starting and joining a thread
//  for each of a 2-block output cost more than the second block (thread
//  starts and joins were 2-3% of the exec worker's CPU in test_faults).
#define S_MIN_THREADED_BLOCKS 4

static void
s_parallel (size_t n_blocks, s_block_fn *fn, void *arg)
{
    if (n_blocks == 0)
        return;
    size_t n = n_blocks < S_MIN_THREADED_BLOCKS ? 1 : (size_t) s_cpus ();
    if (n > n_blocks)
        n = n_blocks;
    s_team_t team[S_MAX_THREADS] = {
        { .fn = fn, .arg = arg, .first = 0, .stride = n, .n_blocks = n_blocks }
    };
    size_t started = 1;
    for (size_t k = 1; k < n; k++)
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

//  Floats by the same rules as kf_elem_check, with the same sums in the
//  same order, but without its division per element: an element is
//  within rtol when its error is below rtol*|ref| by more than a relative
//  S_NEAR (rounding moves either side by about 1e-16), and cannot raise
//  the largest relative error when below it by as much. The rest (NaN,
//  infinity or poison on either side, an error that close to the
//  tolerance, a new largest relative error) take the exact rules. Every
//  timed sample's outputs are compared, so this loop was most of the
//  judge's CPU (two fifths of the exec worker's in test_faults, the
//  sanitizers on); it now takes about two thirds of the time.
#define S_NEAR 1e-12

//  The running figures of s_cmp_f32 into P, its counts of unwritten and
//  non-finite elements kept.
static void
s_cmp_store (kf_elem_part_t *p, uint64_t matched, double dot, double nr, double nc,
             double max_abs, double max_rel)
{
    p->matched = matched;
    p->dot = dot;
    p->nr = nr;
    p->nc = nc;
    p->max_abs = max_abs;
    p->max_rel = max_rel;
}

static void
s_cmp_f32 (const uint32_t *cb, const uint32_t *rb, size_t lo, size_t hi, double rtol,
           double atol, kf_elem_part_t *p)
{
    uint64_t matched = 0;
    double dot = 0, nr = 0, nc = 0, max_abs = 0, max_rel = 0;
    const double below = rtol * (1 - S_NEAR), above = rtol * (1 + S_NEAR);
    for (size_t i = lo; i < hi; i++) {
        uint32_t cx = cb[i], rx = rb[i];
        float cf, rf;
        memcpy (&cf, &cx, 4);
        memcpy (&rf, &rx, 4);
        double cv = cf, rv = rf;
        double ae = fabs (cv - rv), ar = fabs (rv);
        bool within = ae <= atol || ae < below * ar;
        bool finite = ae - ae == 0 && ar - ar == 0;
        if (!finite || (!within && ae <= above * ar) || ae > max_rel * (1 - S_NEAR) * ar) {
            s_cmp_store (p, matched, dot, nr, nc, max_abs, max_rel);
            kf_elem_check (p, KF_F32, cb, rb, i, rtol, atol);
            matched = p->matched, dot = p->dot, nr = p->nr, nc = p->nc;
            max_abs = p->max_abs, max_rel = p->max_rel;
            continue;
        }
        matched += within;
        max_abs = ae > max_abs ? ae : max_abs;
        dot += cv * rv;
        nr += rv * rv;
        nc += cv * cv;
    }
    s_cmp_store (p, matched, dot, nr, nc, max_abs, max_rel);
}

static void
s_cmp_range (const s_cmp_t *k, size_t block, kf_elem_part_t *p)
{
    memset (p, 0, sizeof *p);
    size_t lo = block * S_BLOCK, hi = lo + S_BLOCK < k->n ? lo + S_BLOCK : k->n;
    if (k->dtype == KF_F32) {
        s_cmp_f32 (k->c, k->ref, lo, hi, k->rtol, k->atol, p);
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
                      "max_abs_err", isfinite (w->max_abs) ? w->max_abs : KF_EVAL_ERR_INFINITE,
                      "max_rel_err", isfinite (w->max_rel) ? w->max_rel : KF_EVAL_ERR_INFINITE,
                      "cosine", isfinite (w->cosine) ? w->cosine : 0.0,
                      "nonfinite_mismatch", (json_int_t) w->nonfinite_mismatch);
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
