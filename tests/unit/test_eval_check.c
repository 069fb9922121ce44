/*  test_eval_check.c - the shared evaluation rules (kf_eval_check.c) where
 *  they were made cheaper: inputs drawn in blocks by several threads must
 *  be the very values one pass drew before (a reproducible evaluation
 *  stays reproducible across this change), the one-pass comparison must
 *  reach the verdicts and figures of the element-by-element one, and the
 *  warm-up floor counts the correctness pass's calls and tops up only
 *  what is missing. The old code is kept here, verbatim, as the oracle. */
#include "../../common/kf_task.h"
#include "../../exec-worker/kf_eval_check.h"
#include "../kf_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// --------------------------------------------------------------------------
//  The drawing and comparison as they were (kf_eval_check.c before the
//  blocks), reached through the library's element accessors.

static uint64_t
s_old_next (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double
s_old_uniform01 (uint64_t *state)
{
    return ((s_old_next (state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double
s_old_normal (uint64_t *state)
{
    double u = s_old_uniform01 (state), v = s_old_uniform01 (state);
    return sqrt (-2 * log (u)) * cos (2 * M_PI * v);
}

//  The old per-element store. f32 and f64 as it was written; the others
//  through a one-element fill of the constant kind (which draws nothing),
//  so their rounding is the library's own.
static void
s_old_set (int dtype, void *p, size_t i, double v)
{
    if (dtype == KF_F32) {
        ((float *) p)[i] = (float) v;
        return;
    }
    if (dtype == KF_F64) {
        ((double *) p)[i] = v;
        return;
    }
    json_t *c = json_pack ("{s:s, s:f}", "kind", "constant", "value", v);
    kf_eval_fill (c, dtype, (char *) p + i * kf_dtype_size (dtype), 1, 0);
    json_decref (c);
}

static void
s_old_fill (json_t *dist, int dtype, void *p, size_t n, uint64_t seed)
{
    uint64_t st = seed;
    const char *kind = json_string_value (json_object_get (dist, "kind"));
    if (!kind)
        kind = "normal";
    for (size_t i = 0; i < n; i++) {
        double v;
        if (strcmp (kind, "uniform") == 0) {
            double lo = kf_eval_num (dist, "low", -1), hi = kf_eval_num (dist, "high", 1);
            v = lo + (hi - lo) * s_old_uniform01 (&st);
        }
        else if (strcmp (kind, "constant") == 0)
            v = kf_eval_num (dist, "value", 0);
        else if (strcmp (kind, "heavy_tail") == 0) {
            int dof = (int) kf_eval_num (dist, "dof", 3);
            if (dof < 1)
                dof = 1;
            if (dof > 64)
                dof = 64;
            double chi = 0;
            for (int k = 0; k < dof; k++) {
                double z = s_old_normal (&st);
                chi += z * z;
            }
            v = kf_eval_num (dist, "scale", 1) * s_old_normal (&st) / sqrt (chi / dof);
        }
        else
            v = kf_eval_num (dist, "mean", 0) + kf_eval_num (dist, "std", 1) * s_old_normal (&st);
        s_old_set (dtype, p, i, v);
    }
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

//  Every distribution kind and dtype, over more than one block (65536
//  elements) and over a few elements: the same bytes as the old loop.
static void
s_test_fill (void)
{
    printf (" inputs drawn in blocks are the values drawn in one pass\n");
    const char *dists[] = {
        "{}", "{\"kind\": \"normal\", \"mean\": 0.5, \"std\": 3}",
        "{\"kind\": \"uniform\", \"low\": -2, \"high\": 5}", "{\"kind\": \"uniform\"}",
        "{\"kind\": \"constant\", \"value\": 1.25}", "{\"kind\": \"heavy_tail\"}",
        "{\"kind\": \"heavy_tail\", \"dof\": 5, \"scale\": 2}",
        "{\"kind\": \"heavy_tail\", \"dof\": 0}", "{\"kind\": \"something else\"}",
    };
    size_t sizes[] = { 7, 65536 * 2 + 1001 };
    int mismatches = 0, cases = 0;
    for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
        json_t *dist = json_loads (dists[d], 0, NULL);
        for (int dtype = 0; dtype < 6; dtype++)
            for (size_t z = 0; z < 2; z++) {
                //  The heavy tail draws 2 (dof + 1) numbers an element: a
                //  smaller large case keeps the old loop quick.
                size_t n = strstr (dists[d], "heavy") && z ? 65536 + 3 : sizes[z];
                size_t bytes = n * kf_dtype_size (dtype);
                char *a = malloc (bytes), *b = malloc (bytes);
                memset (a, 0x11, bytes);
                memset (b, 0x22, bytes);
                uint64_t seed = kf_eval_input_seed (42 + d, (int) z, dtype);
                kf_eval_fill (dist, dtype, a, n, seed);
                s_old_fill (dist, dtype, b, n, seed);
                cases++;
                if (memcmp (a, b, bytes) != 0) {
                    mismatches++;
                    fprintf (stderr, "  fill differs: %s, dtype %d, %zu elements\n", dists[d], dtype, n);
                }
                free (a);
                free (b);
            }
        json_decref (dist);
    }
    printf ("  %d of %d fills identical\n", cases - mismatches, cases);
    CHECK (mismatches == 0);

    //  Signed, fresh per set: not all zero, not the same twice.
    size_t n = 1 << 20;
    float *x = malloc (n * sizeof *x), *y = malloc (n * sizeof *y);
    json_t *normal = json_pack ("{s:s, s:f, s:f}", "kind", "normal", "mean", 0.0, "std", 3.0);
    double t0 = s_now ();
    kf_eval_fill (normal, KF_F32, x, n, kf_eval_input_seed (1, 0, 0));
    double t1 = s_now ();
    s_old_fill (normal, KF_F32, y, n, kf_eval_input_seed (1, 0, 0));
    double t2 = s_now ();
    printf ("  1 M normal f32: %.1f ms now, %.1f ms the old way\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    CHECK (memcmp (x, y, n * sizeof *x) == 0);
    kf_eval_fill (normal, KF_F32, y, n, kf_eval_input_seed (1, 1, 0));
    size_t neg = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
        neg += x[i] < 0;
        same += x[i] == y[i];
    }
    CHECK (neg > n / 3 && neg < 2 * n / 3);
    CHECK (same < n / 1000);
    json_decref (normal);
    free (x);
    free (y);
}

// --------------------------------------------------------------------------
//  Comparison

//  The old element-by-element comparison, returning what it found.
typedef struct {
    size_t matched, unwritten;
    long nonfinite;
    double dot, nr, nc, max_abs, max_rel;
} s_old_cmp_t;

static double
s_old_get (int dtype, const void *p, size_t i)
{
    //  Through the library: the element as the comparison reads it is
    //  the float/double value; f32 and f64 are all this test compares.
    return dtype == KF_F32 ? ((const float *) p)[i] : ((const double *) p)[i];
}

static void
s_old_compare (const kf_eval_tol_t *tol, const kf_eval_spec_t *s, const void *c,
               const void *ref, s_old_cmp_t *o)
{
    memset (o, 0, sizeof *o);
    double atol = tol->atol_dtype[s->dtype];
    for (size_t i = 0; i < s->numel; i++) {
        if (kf_eval_is_poison (s->dtype, c, i) && !kf_eval_is_poison (s->dtype, ref, i)) {
            o->unwritten++;
            continue;
        }
        double cv = s_old_get (s->dtype, c, i), rv = s_old_get (s->dtype, ref, i);
        if (!isfinite (rv) || !isfinite (cv)) {
            bool same = (isnan (rv) && isnan (cv)) || (isinf (rv) && cv == rv);
            if (same)
                o->matched++;
            else
                o->nonfinite++;
            continue;
        }
        double abs_err = fabs (cv - rv);
        double rel_err = rv != 0 ? abs_err / fabs (rv) : (abs_err ? INFINITY : 0);
        if (abs_err > o->max_abs)
            o->max_abs = abs_err;
        if (rel_err > o->max_rel)
            o->max_rel = rel_err;
        if (rel_err < tol->rtol || abs_err <= atol)
            o->matched++;
        o->dot += cv * rv;
        o->nr += rv * rv;
        o->nc += cv * cv;
    }
}

//  Candidates made from one reference by each kind of damage, in f32 and
//  f64, small and over several blocks: the same verdict and figures.
static void
s_test_compare (void)
{
    printf (" one-pass comparison in blocks: the verdicts and figures of the old one\n");
    json_t *task = json_pack ("{s:{s:f, s:f}}", "tolerance", "rtol", 1e-2, "atol", 1e-5);
    kf_eval_tol_t tol;
    kf_eval_worst_t w0;
    kf_eval_tol_from_task (task, &tol, &w0);
    json_t *normal = json_pack ("{s:s}", "kind", "normal");
    const char *damage[] = { "none", "noise", "unwritten", "nan", "inf", "wrong", "wrong few",
                             "zero ref", "poison in ref", "at rtol", "ever worse" };
    size_t sizes[] = { 1, 1000, 65536 * 3 + 17 };
    int bad = 0, cases = 0;
    for (int dt = 0; dt < 2; dt++) {
        int dtype = dt ? KF_F64 : KF_F32;
        for (size_t z = 0; z < 3; z++)
            for (size_t d = 0; d < sizeof damage / sizeof damage[0]; d++) {
                size_t n = sizes[z], es = kf_dtype_size (dtype);
                char *ref = malloc (n * es), *c = malloc (n * es);
                kf_eval_fill (normal, dtype, ref, n, 7 + z);
                memcpy (c, ref, n * es);
                for (size_t i = 0; i < n; i++) {
                    double rv = s_old_get (dtype, ref, i), cv = rv;
                    if (!strcmp (damage[d], "noise"))
                        cv = rv * (1 + 1e-3 * ((i % 7) - 3.0) / 3);
                    else if (!strcmp (damage[d], "wrong"))
                        cv = -rv;
                    else if (!strcmp (damage[d], "wrong few") && i % 97 == 0)
                        cv = rv + 1;
                    else if (!strcmp (damage[d], "nan") && i % 1001 == 5)
                        cv = NAN;
                    else if (!strcmp (damage[d], "inf") && i % 1003 == 3)
                        cv = INFINITY;
                    else if (!strcmp (damage[d], "at rtol"))
                        //  On either side of the relative tolerance, by
                        //  less than a float's rounding: the exact rules.
                        cv = rv * (1 + (i % 2 ? 1e-2 : -1e-2)
                                           * (1 + ((double) (i % 5) - 2) * 1e-8));
                    else if (!strcmp (damage[d], "ever worse"))
                        //  A new largest relative error at every element.
                        cv = rv * (1 + 1e-9 * (double) i);
                    else if (!strcmp (damage[d], "zero ref") && i % 3 == 0) {
                        rv = 0;
                        cv = i % 2 ? 1e-6 : 0;
                    }
                    if (dtype == KF_F32) {
                        ((float *) ref)[i] = (float) rv;
                        ((float *) c)[i] = (float) cv;
                    }
                    else {
                        ((double *) ref)[i] = rv;
                        ((double *) c)[i] = cv;
                    }
                }
                if (!strcmp (damage[d], "unwritten"))
                    for (size_t i = n / 3; i < n / 3 + 1 + n / 500; i++)
                        kf_eval_poison (dtype, c + i * es, 1);
                if (!strcmp (damage[d], "poison in ref"))
                    for (size_t i = 0; i < n; i += 11) {
                        kf_eval_poison (dtype, ref + i * es, 1);
                        kf_eval_poison (dtype, c + i * es, 1);
                    }
                kf_eval_spec_t s = { .name = "y", .dtype = dtype, .numel = n, .bytes = n * es };
                kf_eval_worst_t w;
                kf_eval_tol_from_task (task, &tol, &w);
                char detail[512] = "";
                int rc = kf_eval_compare_output (&tol, &w, &s, c, ref, "set 0", detail, sizeof detail);
                s_old_cmp_t o;
                s_old_compare (&tol, &s, c, ref, &o);
                double frac = (double) o.matched / (double) n;
                double cosine = o.nr == 0 && o.nc == 0 ? 1
                              : (o.nr == 0 || o.nc == 0) ? 0 : o.dot / sqrt (o.nr * o.nc);
                bool old_ok = !o.unwritten && !o.nonfinite && frac >= tol.min_match
                              && cosine >= tol.min_cosine;
                cases++;
                //  Sums over blocks are added in another order: the
                //  cosine may differ in its last bits, nothing else.
                bool same = (rc == 0) == old_ok && w.max_abs == o.max_abs && w.max_rel == o.max_rel
                            && w.match_fraction == fmin (1, frac)
                            && w.nonfinite_mismatch == o.nonfinite
                            && fabs (w.cosine - fmin (1, cosine)) < 1e-12;
                if (o.unwritten)
                    same = same && strstr (detail, "not written") != NULL;
                if (!same) {
                    bad++;
                    fprintf (stderr, "  compare differs: dtype %d, %zu elements, %s: rc %d (old %s), %s\n",
                             dtype, n, damage[d], rc, old_ok ? "ok" : "bad", detail);
                }
                free (ref);
                free (c);
            }
    }
    printf ("  %d of %d comparisons agree\n", cases - bad, cases);
    CHECK (bad == 0);
    //  What a timed sample's check costs: 1 M floats with small errors,
    //  on one thread (the sanitizers' build is what the suite runs).
    size_t n = (size_t) 1 << 20;
    float *ref = malloc (n * 4), *c = malloc (n * 4);
    kf_eval_fill (normal, KF_F32, ref, n, 3);
    for (size_t i = 0; i < n; i++)
        c[i] = ref[i] * (1 + 1e-6f * (float) (i % 3));
    kf_eval_spec_t s = { .name = "y", .dtype = KF_F32, .numel = n, .bytes = n * 4 };
    kf_eval_worst_t w;
    kf_eval_tol_from_task (task, &tol, &w);
    char detail[512];
    s_old_cmp_t o;
    double t0 = s_now ();
    int rc = kf_eval_compare_output (&tol, &w, &s, c, ref, "set 0", detail, sizeof detail);
    double t1 = s_now ();
    s_old_compare (&tol, &s, c, ref, &o);
    double t2 = s_now ();
    printf ("  1 M f32 compared: %.1f ms now (threads as the host has), %.1f ms the old way\n",
            (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    CHECK (rc == 0 && o.matched == n);
    free (ref);
    free (c);
    json_decref (normal);
    json_decref (task);
}

//  Poison fills every element of every dtype with the value the checks
//  read as poison, and nothing past them.
static void
s_test_poison (void)
{
    printf (" poison written whole, for every dtype, and no further\n");
    int dtypes[] = { KF_F32, KF_F64, KF_F16, KF_BF16, KF_I32, KF_I64 };
    size_t sizes[] = { 1, 2, 3, 1000, 65536 + 7 };
    int bad = 0;
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n = sizes[z], es = kf_dtype_size (dtypes[t]);
            unsigned char *p = malloc ((n + 1) * es);
            memset (p, 0x5a, (n + 1) * es);
            kf_eval_poison (dtypes[t], p, n);
            for (size_t i = 0; i < n; i++)
                bad += !kf_eval_is_poison (dtypes[t], p, i);
            for (size_t b = n * es; b < (n + 1) * es; b++)
                bad += p[b] != 0x5a;
            free (p);
        }
    printf ("  %d elements or bytes wrong\n", bad);
    CHECK (bad == 0);
}

// --------------------------------------------------------------------------
//  The warm-up floor

static void
s_test_warm (void)
{
    printf (" warm-up floor counting the correctness calls\n");
    kf_eval_warm_t w = { 0 };
    //  Nothing counted: the first round always runs, then the floors.
    CHECK (kf_eval_warm_more (&w, true, 0, 0, 0, 0));
    w.since = 10.0;
    CHECK (kf_eval_warm_more (&w, true, 9, 11.5, 1.0, 10));      // 9 calls
    CHECK (!kf_eval_warm_more (&w, true, 10, 11.5, 1.0, 10));
    CHECK (kf_eval_warm_more (&w, true, 10, 10.9, 1.0, 10));     // 0.9 s

    //  Five sets: five calls of each side, the first at 20 s.
    kf_eval_warm_t c = { 0 };
    for (int set = 0; set < 5; set++) {
        kf_eval_warm_count (&c, true, 20.0 + set * 0.1);
        kf_eval_warm_count (&c, false, 20.05 + set * 0.1);
    }
    CHECK (c.since == 20.0 && c.ref_calls == 5 && c.cand_calls == 5);
    CHECK (kf_eval_warm_counted (&c, true) == 5);
    //  At least one top-up round, even with both floors met.
    CHECK (kf_eval_warm_more (&c, true, 0, 30.0, 1.0, 10));
    CHECK (!kf_eval_warm_more (&c, true, 1, 30.0, 1.0, 2));
    //  Ten calls a side: five from the sets, so five rounds of top-up.
    CHECK (kf_eval_warm_more (&c, true, 4, 30.0, 1.0, 10));
    CHECK (!kf_eval_warm_more (&c, true, 5, 30.0, 1.0, 10));
    //  One second from the first set's first call, not from the top-up.
    CHECK (kf_eval_warm_more (&c, true, 5, 20.99, 1.0, 10));
    CHECK (!kf_eval_warm_more (&c, true, 5, 21.0, 1.0, 10));
    //  A side with fewer calls (a set that failed half-way) binds.
    kf_eval_warm_count (&c, false, 20.6);
    CHECK (kf_eval_warm_counted (&c, true) == 5);
    //  Against exported data there is no reference: the candidate's.
    kf_eval_warm_t d = { 0 };
    for (int set = 0; set < 3; set++)
        kf_eval_warm_count (&d, false, 5.0 + set);
    CHECK (kf_eval_warm_counted (&d, false) == 3 && kf_eval_warm_counted (&d, true) == 0);
    CHECK (kf_eval_warm_more (&d, false, 6, 9.0, 1.0, 10));
    CHECK (!kf_eval_warm_more (&d, false, 7, 9.0, 1.0, 10));
}

// --------------------------------------------------------------------------
//  Phases

static void
s_test_phases (void)
{
    printf (" phases: report and exit after the timing\n");
    double stamps[KF_EVAL_T_N] = { 0 };
    stamps[KF_EVAL_T_BEGIN] = 100.01;
    stamps[KF_EVAL_T_LOADED] = 100.2;
    stamps[KF_EVAL_T_CHECKED] = 100.3;
    stamps[KF_EVAL_T_TIMED] = 102.3;
    stamps[KF_EVAL_T_REPORTED] = 102.35;
    json_t *p = kf_eval_phases_json (100.0, stamps, 102.45);
    double v[6];
    const char *names[] = { "child_start", "load", "correctness", "timing", "report", "exit" };
    for (int k = 0; k < 6; k++)
        v[k] = json_number_value (json_object_get (p, names[k]));
    CHECK (fabs (v[0] - 0.01) < 1e-6 && fabs (v[1] - 0.19) < 1e-6 && fabs (v[2] - 0.1) < 1e-6);
    CHECK (fabs (v[3] - 2.0) < 1e-6 && fabs (v[4] - 0.05) < 1e-6 && fabs (v[5] - 0.1) < 1e-6);
    json_decref (p);
    //  Killed in the timing: it runs to the end; nothing after it.
    stamps[KF_EVAL_T_TIMED] = stamps[KF_EVAL_T_REPORTED] = 0;
    p = kf_eval_phases_json (100.0, stamps, 108.3);
    CHECK (fabs (json_number_value (json_object_get (p, "timing")) - 8.0) < 1e-6);
    CHECK (json_number_value (json_object_get (p, "report")) == 0);
    CHECK (json_number_value (json_object_get (p, "exit")) == 0);
    json_decref (p);

    kf_eval_split_add (KF_EVAL_S_INPUTS, 0.25);
    kf_eval_split_add (KF_EVAL_S_INPUTS, 0.5);
    kf_eval_split_add (KF_EVAL_S_CALLS, -1);        // ignored
    json_t *sp = kf_eval_split_json ();
    CHECK (json_object_size (sp) == KF_EVAL_S_N);
    CHECK (json_number_value (json_object_get (sp, "inputs")) == 0.75);
    CHECK (json_number_value (json_object_get (sp, "calls")) == 0);
    json_decref (sp);
}

int
main (void)
{
    s_test_fill ();
    s_test_compare ();
    s_test_poison ();
    s_test_warm ();
    s_test_phases ();
    return kf_test_done ("test_eval_check");
}
