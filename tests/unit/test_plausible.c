/*  test_plausible.c - the plausibility rules (common/kf_plausible.c) that
 *  decide which correct results are evaluated again before they count,
 *  and the worker's report of them (kf_eval_roofline): a kernel that is
 *  merely much faster than a slow reference is not suspicious; one past a
 *  measured ceiling is, where that ceiling binds; one far beyond its run's
 *  counted results is, once the run has some; a re-verification holds
 *  within the tolerance and not below it. */
#include "../../common/kf_plausible.h"
#include "../../exec-worker/kf_eval_check.h"
#include "../kf_test.h"

#include <math.h>
#include <string.h>

static kf_plausible_rules_t s_rules;

/* An H200-like device: 4 TB/s copy, 55 TFLOP/s FMA. */
static kf_plausible_figures_t
s_gpu (double bytes, double flops, double ns, bool bw_applies)
{
    kf_plausible_figures_t f = { .bytes = bytes, .flops = flops, .cand_ns = ns,
                                 .copy_gbs = 4000, .peak_gflops = 55000,
                                 .bw_applies = bw_applies };
    return f;
}

static void
s_honest_fast (void)
{
    char why[300] = "";
    //  A host kernel 54x faster than PyTorch eager on a CPU: 16 MiB in and
    //  out in 0.5 ms is 67 GB/s against a 100 GB/s copy, 1 GFLOP/s of
    //  declared work against a 2 TFLOP/s peak. Neither rule applies.
    kf_plausible_figures_t host = { .bytes = 33554432, .flops = 5e5, .cand_ns = 5e5,
                                    .copy_gbs = 100, .peak_gflops = 2000, .bw_applies = true };
    CHECK (!kf_plausible_ceiling (&host, s_rules.margin, why, sizeof why));
    CHECK (!kf_plausible_outlier (54.31, 26.45, 5, &s_rules, why, sizeof why));
    //  Round 19: a host kernel reading two inputs and streaming one
    //  output at 12 GB/s, on a VM whose copy measured 10 GB/s and whose
    //  cores together read cold data at 19.9 GB/s, was held for audit. The
    //  ceiling is the faster of the two; past it the rule still holds.
    kf_plausible_figures_t reads = { .bytes = 100663296, .cand_ns = 100663296 / 12.0,
                                     .copy_gbs = 10, .read_gbs = 19.9, .bw_applies = true };
    CHECK (!kf_plausible_ceiling (&reads, s_rules.margin, why, sizeof why));
    reads.cand_ns = 100663296 / 30.0;
    CHECK (kf_plausible_ceiling (&reads, s_rules.margin, why, sizeof why));
    printf ("%s\n", why);
    CHECK (strstr (why, "above the measured rate of every core reading cold data, 20 GB/s"));
    reads.read_gbs = 0;
    reads.cand_ns = 100663296 / 12.0;
    CHECK (kf_plausible_ceiling (&reads, s_rules.margin, why, sizeof why));
    CHECK (strstr (why, "above the measured copy bandwidth of 10 GB/s"));
    //  Round 26: a kernel that streams its outputs moved 96 MiB at 30 GB/s
    //  against a 22 GB/s plain copy and a 21 GB/s cold read, with copies
    //  by streaming stores measured at 29.1 (every core) and 32.5 GB/s
    //  (one core): held for audit, though honest. The streaming copy is a
    //  ceiling too; past it the rule still holds.
    kf_plausible_figures_t streamed = { .bytes = 100663296, .cand_ns = 100663296 / 30.0,
                                        .copy_gbs = 22, .read_gbs = 21, .bw_applies = true };
    CHECK (kf_plausible_ceiling (&streamed, s_rules.margin, why, sizeof why));
    streamed.stream_gbs = 32.5;
    CHECK (!kf_plausible_ceiling (&streamed, s_rules.margin, why, sizeof why));
    streamed.cand_ns = 100663296 / 40.0;
    CHECK (kf_plausible_ceiling (&streamed, s_rules.margin, why, sizeof why));
    printf ("%s\n", why);
    CHECK (strstr (why, "above the measured copy with streaming stores, 32 GB/s (over 1.1x it; "
                        "the plain copy: 22 GB/s)"));
    //  Round 23: ceilings measured beside other work (every core's cold
    //  read at 22 GB/s, 39 quiet) held two honest kernels at 26 GB/s. They
    //  bind at KF_PLAUSIBLE_MARGIN_BUSY: 26 passes, 50 does not.
    kf_plausible_figures_t busy = { .bytes = 100663296, .cand_ns = 100663296 / 26.0,
                                    .copy_gbs = 15.5, .read_gbs = 22.2, .bw_applies = true };
    CHECK (kf_plausible_ceiling (&busy, s_rules.margin, why, sizeof why));
    busy.ceilings_busy = true;
    CHECK (!kf_plausible_ceiling (&busy, s_rules.margin, why, sizeof why));
    busy.cand_ns = 100663296 / 50.0;
    CHECK (kf_plausible_ceiling (&busy, s_rules.margin, why, sizeof why));
    printf ("%s\n", why);
    CHECK (strstr (why, "(over 2x it; the copy bandwidth: 16 GB/s, measured beside other work)"));
    //  The first big leap of a run whose first kernels were slow: 26x
    //  after 2.9x is under 8x of it.
    CHECK (!kf_plausible_outlier (23.0, 2.9, 4, &s_rules, why, sizeof why));
    //  Near the copy bandwidth (a streaming kernel can beat a memcpy by a
    //  few percent): inside the margin.
    kf_plausible_figures_t near = s_gpu (256e6, 0, 256e6 / 4200, true);
    CHECK (!kf_plausible_ceiling (&near, s_rules.margin, why, sizeof why));
    //  The worker's report of the same: a 54x speedup is no flag.
    json_t *r = json_pack ("{s:s, s:s}", "verdict", "correct", "detail", "all checks passed");
    kf_eval_ceilings_t c = { .copy_gbs = 100, .peak_gflops = 2000, .peak_source = "avx2+fma" };
    kf_eval_roofline (r, 33554432, 16777216, 5e5, 5e5, 2.7e7, &c, true, 54.31);
    CHECK (json_is_false (json_object_get (r, "audit")));
    CHECK (!json_object_get (r, "audit_reason"));
    CHECK (!strcmp (json_string_value (json_object_get (r, "detail")), "all checks passed"));
    json_decref (r);
}

static void
s_beyond_ceiling (void)
{
    char why[300] = "";
    //  256 MB moved in 32 us: 8000 GB/s, twice the copy bandwidth.
    kf_plausible_figures_t bw = s_gpu (256e6, 0, 32e3, true);
    CHECK (kf_plausible_ceiling (&bw, s_rules.margin, why, sizeof why));
    CHECK (strstr (why, "above the measured copy bandwidth of 4000 GB/s") != NULL);
    //  The same rate on data that stays in the cache between calls: the
    //  DRAM ceiling does not bind.
    kf_plausible_figures_t cached = s_gpu (256e6, 0, 32e3, false);
    CHECK (!kf_plausible_ceiling (&cached, s_rules.margin, why, sizeof why));
    //  Declared work faster than the FMA peak: 1e12 flops in 1 ms.
    why[0] = 0;
    kf_plausible_figures_t fl = s_gpu (1e6, 1e12, 1e6, false);
    CHECK (kf_plausible_ceiling (&fl, s_rules.margin, why, sizeof why));
    CHECK (strstr (why, "above the measured FMA peak of 55000 GFLOP/s") != NULL);
    //  Just past the margin and just inside it.
    kf_plausible_figures_t over = s_gpu (1.12 * 4000 * 1e3, 0, 1e3, true);
    kf_plausible_figures_t under = s_gpu (1.08 * 4000 * 1e3, 0, 1e3, true);
    CHECK (kf_plausible_ceiling (&over, s_rules.margin, why, sizeof why));
    CHECK (!kf_plausible_ceiling (&under, s_rules.margin, why, sizeof why));
    //  Unmeasured ceilings and undeclared work judge nothing.
    kf_plausible_figures_t none = { .bytes = 256e6, .flops = 1e15, .cand_ns = 1,
                                    .bw_applies = true };
    CHECK (!kf_plausible_ceiling (&none, s_rules.margin, why, sizeof why));
    //  The worker reports it, with the reason in the verdict line.
    json_t *r = json_pack ("{s:s, s:s}", "verdict", "correct", "detail", "all checks passed");
    kf_eval_ceilings_t c = { .copy_gbs = 4000, .peak_gflops = 55000, .peak_source = "fma-ptx" };
    kf_eval_roofline (r, 1e6, 5e5, 1e18, 1e6, 2e6, &c, false, 2.0);
    CHECK (json_is_true (json_object_get (r, "audit")));
    CHECK (strstr (json_string_value (json_object_get (r, "detail")),
                   "all checks passed; flagged for audit: computes at") != NULL);
    json_decref (r);
}

static void
s_beyond_distribution (void)
{
    char why[300] = "";
    //  60x in a run whose counted best is 3x, with 3 counted: over 24x.
    CHECK (kf_plausible_outlier (60, 3, 3, &s_rules, why, sizeof why));
    CHECK (strstr (why, "over 8x the run's best counted speedup of 3.00x") != NULL);
    //  Not before the run has enough counted results to have a
    //  distribution.
    CHECK (!kf_plausible_outlier (60, 3, 2, &s_rules, why, sizeof why));
    //  A run whose best is under 1x measures from parity: 7.9x is not
    //  suspicious after 0.3x, 8.1x is.
    CHECK (!kf_plausible_outlier (7.9, 0.3, 5, &s_rules, why, sizeof why));
    CHECK (kf_plausible_outlier (8.1, 0.3, 5, &s_rules, why, sizeof why));
    //  Another factor, as an operator may configure it.
    kf_plausible_rules_t strict = s_rules;
    strict.outlier_factor = 1;
    strict.min_counted = 1;
    CHECK (kf_plausible_outlier (3.1, 3, 1, &strict, why, sizeof why));
    CHECK (!kf_plausible_outlier (3.0, 3, 1, &strict, why, sizeof why));
    //  Factor 0, no counted results needed: every correct result.
    strict.outlier_factor = 0;
    strict.min_counted = 0;
    CHECK (kf_plausible_outlier (0.2, 0, 0, &strict, why, sizeof why));
    CHECK (strstr (why, "every correct result is re-verified") != NULL);
}

static void
s_holds (void)
{
    char why[300] = "";
    CHECK (kf_plausible_holds (10, 6, 0.5, why, sizeof why));
    CHECK (kf_plausible_holds (10, 12, 0.5, why, sizeof why));
    CHECK (!kf_plausible_holds (10, 4.9, 0.5, why, sizeof why));
    CHECK (strstr (why, "did not hold: 4.90x against 10.00x first") != NULL);
    CHECK (!kf_plausible_holds (10, 0, 1, why, sizeof why));
    CHECK (!kf_plausible_holds (10, 9.9, 0, why, sizeof why));
}

//  Round 15: one source timed 588.26x, then 273.80x in a later sweep;
//  the first figure became the run's best. A would-be new best is timed
//  once more; the first counted figure has nothing to beat, and a figure
//  at or below the best is no new best.
static void
s_new_best (void)
{
    char why[300] = "";
    CHECK (kf_plausible_new_best (588.26, 414.96, 4, why, sizeof why));
    CHECK (!strncmp (why, KF_PLAUSIBLE_CONFIRM, strlen (KF_PLAUSIBLE_CONFIRM)));
    CHECK (strstr (why, "588.26x against the run's best counted 414.96x") != NULL);
    CHECK (kf_plausible_new_best (1.01, 1.0, 1, why, sizeof why));
    CHECK (!kf_plausible_new_best (414.96, 414.96, 4, why, sizeof why));
    CHECK (!kf_plausible_new_best (300, 414.96, 4, why, sizeof why));
    CHECK (!kf_plausible_new_best (5, 0, 0, why, sizeof why));
}

static void
s_task (void)
{
    json_t *task = json_loads ("{\"inputs\": [{\"name\": \"x\", \"shape\": [64, 256], \"dtype\": \"f32\"},"
                               " {\"name\": \"w\", \"shape\": [256], \"dtype\": \"f64\"}],"
                               " \"outputs\": [{\"name\": \"y\", \"shape\": [64, 256], \"dtype\": \"f16\"}],"
                               " \"flops\": [1e6, 2e6]}", 0, NULL);
    CHECK (task != NULL);
    CHECK (kf_plausible_task_bytes (task) == 64 * 256 * 4 + 256 * 8 + 64 * 256 * 2);
    CHECK (kf_plausible_task_flops (task) == 1e6);
    json_object_set_new (task, "flops", json_real (5));
    CHECK (kf_plausible_task_flops (task) == 5);
    json_object_del (task, "flops");
    CHECK (kf_plausible_task_flops (task) == 0);
    json_decref (task);
}

int
main (void)
{
    kf_plausible_rules_default (&s_rules);
    CHECK (s_rules.margin == KF_PLAUSIBLE_MARGIN && s_rules.outlier_factor == 8
           && s_rules.min_counted == 3 && s_rules.tolerance == 0.5);
    s_honest_fast ();
    s_beyond_ceiling ();
    s_beyond_distribution ();
    s_holds ();
    s_new_best ();
    s_task ();
    return kf_test_done ("test_plausible");
}
