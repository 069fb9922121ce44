/*  test_prompt_slim.c - round 24's prompt sizes (issue 15, 58-75 KB
 *  prompts whose useful part was a fraction; kf_prompt_slim.h):
 *
 *  1. an inspiration more than KF_PROMPT_INSPIRATION_SLOWER times slower
 *     than the kernel to improve (or, with none, the run's best) is one
 *     line: its candidate, figure and features, and why its code is left
 *     out;
 *  2. a tuning prompt names the run's best in one line where it is not
 *     the kernel to template;
 *  3. a kernel shown with code joins those a later one is diffed against
 *     (the last try, each inspiration), and an inspiration of the same
 *     normalised source as an earlier one is not shown again.
 *
 *  KF_TEST_SHOW=1 prints the prompts.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_slim.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  A kernel of LINES lines: a skeleton of intrinsics, lines FROM to TO
//  (1-based, inclusive) VARIANT's own.
static char *
s_source (int lines, char variant, int from, int to)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    fputs ("#include <immintrin.h>\n", f);
    for (int k = 1; k <= lines; k++) {
        if (k >= from && k <= to)
            fprintf (f, "        acc%c%d = _mm256_fmadd_ps (a%d, b%c, acc%c%d);\n", variant,
                     k % 12, k % 4, variant, variant, k);
        else
            fprintf (f, "    const float *restrict p%d = panel + %d * KB; /* skeleton */\n", k,
                     k);
    }
    fclose (f);
    return text;
}

static json_t *
s_kernel (int id, double speedup, const char *source)
{
    return json_pack ("{s:i, s:s, s:s, s:f, s:s, s:f, s:f, s:s}", "id", id, "source", source,
                      "status", "correct", "speedup", speedup, "coords", "{1,0,1}",
                      "candidate_ns", 186e6 / speedup, "reference_ns", 186e6, "fidelity",
                      "full");
}

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}], s:[{s:s, s:[i, i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "celu_colscale_add", "op", "celu_colscale_add", "description",
                      "celu(a) * s + y", "inputs", "name", "in0", "shape", 2048, 4096, "dtype",
                      "f32", "outputs", "name", "out0", "shape", 2048, 4096, "dtype", "f32",
                      "reference", "language", "pytorch", "source",
                      "def forward(a):\n    return F.celu(a)\n", "tolerance", "rtol", 0.01,
                      "atol", 1e-5);
}

static char *
s_build (kf_prompt_in_t *in, const char *what)
{
    char *p = kf_prompt_build (in);
    printf ("%s: %zu bytes\n", what, p ? strlen (p) : 0);
    if (getenv ("KF_TEST_SHOW") && p)
        fputs (p, stdout);
    return p;
}

//  1: candidate 1 (plain C at 1.66x, 112 ms) beside a kernel to improve
//  at 13.1x (14.2 ms); candidate 5 at 10.0x is shown whole.
static void
test_slow_inspiration (void)
{
    json_t *spec = s_spec ();
    char *base_src = s_source (120, 'P', 40, 60);
    char *slow_src = s_source (140, 'S', 1, 140);
    char *fast_src = s_source (120, 'F', 1, 120);
    json_t *base = s_kernel (2, 13.1, base_src);
    json_t *insp = json_pack ("[o, o]", s_kernel (1, 1.66, slow_src),
                              s_kernel (5, 10.0, fast_src));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .base_is_best = true, .inspirations = insp, .generation = 1,
                          .slot = 2, .population = 3 };
    char *p = s_build (&in, "slow inspiration, kernel to improve");
    CHECK (kf_test_has (p, "### Inspiration 1, of the archive's cell"));
    CHECK (kf_test_has (p, "Candidate 1: 1.660x the reference's speed (full protocol); its code "
                           "has: "));
    CHECK (kf_test_has (p, "Its code is left out: its figure is below 1/5 of the kernel to "
                           "improve's (13.100x), too far behind to hold an idea that kernel "
                           "can borrow.\n"));
    CHECK (!kf_test_has (p, "accS"));
    CHECK (kf_test_has (p, "accF"));
    //  Round 29: one shown whole but slower says so.
    CHECK (kf_test_has (p, "It is slower than the kernel to improve (10.000x against 13.100x): "
                           "take an idea from it, not its whole design"));
    free (p);
    //  Round 30: ... unless the kernel to improve runs threads side by
    //  side and this one, on one thread, is faster than it on one core.
    json_object_set_new (base, "one_core", json_pack ("{s:f, s:f}", "median_ns", 20e6,
                                                      "cpu_per_wall", 1.9));
    p = s_build (&in, "slower inspiration, faster per core");
    CHECK (kf_test_has (p, "It is slower than the kernel to improve (10.000x against 13.100x), "
                           "but on one thread: the kernel to improve runs threads side by side "
                           "and takes 20 ms a call on one core, this one 18.6 ms, so per core "
                           "its design is the faster one"));
    CHECK (!kf_test_has (p, "take an idea from it, not its whole design"));
    free (p);
    //  Slower on one core too: the plain words.
    json_object_set_new (base, "one_core", json_pack ("{s:f, s:f}", "median_ns", 17e6,
                                                      "cpu_per_wall", 1.9));
    p = s_build (&in, "slower inspiration, slower per core");
    CHECK (kf_test_has (p, "It is slower than the kernel to improve (10.000x against 13.100x): "
                           "take an idea from it, not its whole design"));
    free (p);
    json_object_del (base, "one_core");
    //  ... and not one as fast.
    json_object_set_new (json_array_get (insp, 1), "speedup", json_real (13.0));
    p = s_build (&in, "inspiration as fast");
    CHECK (kf_test_has (p, "accF") && !kf_test_has (p, "It is slower than"));
    free (p);
    json_object_set_new (json_array_get (insp, 1), "speedup", json_real (10.0));
    //  No kernel to improve: against the run's best.
    in.base = NULL;
    in.best = base;
    p = s_build (&in, "slow inspiration, no kernel to improve");
    CHECK (kf_test_has (p, "its figure is below 1/5 of the best kernel so far's (13.100x)"));
    CHECK (!kf_test_has (p, "accS"));
    free (p);
    //  Within five times: shown.
    json_object_set_new (json_array_get (insp, 0), "speedup", json_real (2.7));
    p = s_build (&in, "inspiration within 5x");
    CHECK (kf_test_has (p, "accS") && !kf_test_has (p, "Its code is left out"));
    free (p);
    json_decref (insp);
    json_decref (base);
    json_decref (spec);
    free (base_src);
    free (slow_src);
    free (fast_src);
}

//  2: the tuning prompt of candidate 12 with the run's best, candidate
//  11, of another design.
static void
test_tuning_best (void)
{
    json_t *spec = s_spec ();
    char *base_src = s_source (200, 'T', 1, 200);
    char *best_src = s_source (290, 'B', 1, 290);
    json_t *base = s_kernel (12, 14.07, base_src), *best = s_kernel (11, 16.2, best_src);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = best, .templated = true, .tune_points = 8, .generation = 3,
                          .slot = 0, .population = 3 };
    char *p = s_build (&in, "tuning prompt");
    CHECK (kf_test_has (p, "## Best kernel so far (candidate 11)"));
    CHECK (kf_test_has (p, "Candidate 11: 16.200x the reference's speed (full protocol); its "
                           "code has: "));
    CHECK (kf_test_has (p, "Its code is left out: this prompt templates the kernel to improve "
                           "(candidate 12), keeping its structure, not this one.\n"));
    CHECK (!kf_test_has (p, "accB"));
    CHECK (kf_test_has (p, "accT"));
    free (p);
    //  A kernel prompt still shows it.
    in.templated = false;
    p = s_build (&in, "kernel prompt, same kernels");
    CHECK (kf_test_has (p, "accB") && !kf_test_has (p, "Its code is left out"));
    free (p);
    json_decref (best);
    json_decref (base);
    json_decref (spec);
    free (base_src);
    free (best_src);
}

//  3: an inspiration a few lines off the last try, and another of the
//  same normalised source as the first.
static void
test_shown_once (void)
{
    json_t *spec = s_spec ();
    char *base_src = s_source (200, 'P', 1, 100);
    char *last_src = s_source (200, 'L', 101, 200);
    char *near_src = s_source (200, 'L', 101, 196);
    json_t *base = s_kernel (4, 11.5, base_src), *last = s_kernel (8, 10.0, last_src);
    json_t *near = s_kernel (9, 11.0, near_src), *again = s_kernel (10, 11.0, near_src);
    json_object_set_new (near, "norm_hash", json_string ("abc"));
    json_object_set_new (again, "norm_hash", json_string ("abc"));
    json_t *insp = json_pack ("[o, o]", near, again);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .base_is_best = true, .last = last, .inspirations = insp,
                          .generation = 2, .slot = 0, .population = 3 };
    char *p = s_build (&in, "last try and inspirations");
    CHECK (kf_test_has (p, "This kernel shares 197 of its 201 lines with the last kernel tried "
                           "(candidate 8)"));
    CHECK (kf_test_has (p, "### Inspiration 1") && !kf_test_has (p, "### Inspiration 2"));
    free (p);
    json_decref (insp);
    json_decref (last);
    json_decref (base);
    json_decref (spec);
    free (base_src);
    free (last_src);
    free (near_src);
}

int
main (void)
{
    test_slow_inspiration ();
    test_tuning_best ();
    test_shown_once ();
    return kf_test_done ("test_prompt_slim");
}
