/*  test_round23.c - what round 23 of the model in the loop (issue 15,
 *  docs/search.md "Twenty-third round") found:
 *
 *  1. an exec worker started while other work ran measured every core's
 *     cold read at 22 GB/s (39 on a quiet host) and a copy of 15.5 GB/s;
 *     the Target section gave them as the host's figures, unmarked (the
 *     ceilings' margin is test_plausible's);
 *  2. an attempt handed an idea "together with" streaming stores read,
 *     in the same paragraph, streaming stores "held back" (a try in
 *     flight);
 *  3. an idea the meta-prompter added "on the threaded kernel with
 *     ordinary stores" went to a one-thread kernel of streaming stores:
 *     the meta prompt asks for ideas worded for whatever kernel they go
 *     to;
 *  4. the plain product's loop-order idea (i-k-j, @A[i][k] broadcast
 *     against @B's row k) went three times to kernels that walked that
 *     order already: it is the outer-product feature, which the reader
 *     finds in such a kernel; and it says how many rows of @B a k block
 *     may take before its walk needs more 4 KiB pages than a first-level
 *     data TLB commonly holds (128 rows 2 KiB apart fill 64 entries).
 */
#include "../../coordinator/kf_meta_ideas.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s}],"
                      " s:[{s:s, s:[i, i], s:s}], s:{s:f, s:f}}",
                      "name", "silu_sqrt_add", "op", "silu_sqrt_add", "description",
                      "a * sigmoid(a) + sqrt(|b| + 1)", "inputs", "name", "in0", "shape", 2048,
                      4096, "dtype", "f32", "name", "in1", "shape", 2048, 4096, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 2048, 4096, "dtype", "f32",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_host (bool busy)
{
    json_t *hw = json_pack ("{s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:s, s:s}]}",
                            "backend", "host", "devices", "name", "AMD EPYC", "cores", 2,
                            "physical_cores", 2, "clock_mhz_measured", 3243.0,
                            "read_cold_one_core_gbs", 17.0, "read_cold_all_cores_gbs", 22.2,
                            "peak_gflops_one_core", 98.0, "peak_gflops_all_threads", 190.0,
                            "isa", "sse4.2 avx2", "peak_source", "avx2+fma");
    if (busy)
        json_object_set_new (json_array_get (json_object_get (hw, "devices"), 0),
                             "figures_measured_busy", json_true ());
    return hw;
}

static void
test_busy_figures (void)
{
    json_t *spec = s_spec ();
    for (int busy = 0; busy < 2; busy++) {
        json_t *hw = s_host (busy);
        kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                              .generation = 0, .slot = 0, .population = 3 };
        char *p = kf_prompt_build (&in);
        bool said = p && strstr (p, "The exec worker measured the figures below at its start "
                                    "while other work ran on the host, so its rates may read low");
        CHECK (said == (busy == 1));
        if (said != (busy == 1) && p)
            printf ("%s\n", strstr (p, "## Target") ? strstr (p, "## Target") : p);
        free (p);
        json_decref (hw);
    }
    json_decref (spec);
}

static void
test_with_not_held (void)
{
    json_t *spec = s_spec (), *hw = s_host (false);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t approx = kf_test_idea_index (ideas, n, KF_IDEA_APPROX);
    size_t stream = kf_test_idea_index (ideas, n, KF_IDEA_STREAM);
    CHECK (approx < n && stream < n);
    if (approx >= n || stream >= n) {
        json_decref (hw);
        json_decref (spec);
        return;
    }
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 1, "source",
                              "int kf_forward (void) { return 0; }\n", "status", "correct",
                              "speedup", 31.4);
    json_t *plan = json_pack ("{s:s, s:{}, s:[], s:{s:s, s:f, s:f, s:f, s:f}, s:{s:i}}", "mine",
                              ideas[approx], "notes", "aside", "with", "idea", ideas[stream],
                              "cycles", 20.2, "budget", 20.0, "share", 0.99, "bound", 0.9,
                              "held", ideas[stream], 1);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .best = base, .generation = 1, .slot = 0,
                          .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Together with it") && !strstr (p, "Held back while an idea"));
    free (p);
    //  Another idea held is still said.
    size_t threads = kf_test_idea_index (ideas, n, KF_IDEA_THREADS);
    if (threads < n)
        json_object_set_new (json_object_get (plan, "held"), ideas[threads], json_integer (1));
    p = kf_prompt_build (&in);
    CHECK (threads < n && p && strstr (p, "Held back while an idea"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

static void
test_meta_idea_words (void)
{
    json_t *run = json_pack ("{s:s, s:s, s:{s:s}}", "language", "c", "target", "host", "spec",
                             "name", "silu_sqrt_add");
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s, s:[s]}", "philosophy", "P", "strategies",
                                  "S", "pitfalls", "X", "analysis", "A", KF_META_IDEAS_KEY,
                                  "use streaming stores");
    json_t *outcomes = json_pack ("[{s:i, s:i, s:i, s:i, s:s, s:s, s:f, s:s}]", "candidate_id", 7,
                                  "generation", 1, "slot", 0, "prompt_version", 1, "phase",
                                  "search", "status", "correct", "speedup", 36.9, "fidelity",
                                  "full");
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (p && strstr (p, "ADD IDEA:")
           && strstr (p, "Word an idea as what to do to whatever kernel it is handed, not as a "
                         "change to one kernel of these outcomes"));
    free (p);
    json_decref (outcomes);
    json_decref (sections);
    json_decref (run);
}

static void
test_order_idea (void)
{
    json_t *spec = json_pack ("{s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s},"
                              " {s:s, s:[i], s:s}], s:[{s:s, s:[i, i], s:s}], s:{s:s, s:s},"
                              " s:{s:f, s:f}}",
                              "name", "mm_leaky_rowscale", "op", "mm_leaky_rowscale", "inputs",
                              "name", "in0", "shape", 384, 1024, "dtype", "f32", "name", "in1",
                              "shape", 1024, 512, "dtype", "f32", "name", "in2", "shape", 384,
                              "dtype", "f32", "outputs", "name", "out0", "shape", 384, 512,
                              "dtype", "f32", "reference", "language", "pytorch", "source",
                              "class Model(nn.Module):\n    def forward(self, a, b, r):\n"
                              "        return F.leaky_relu(a @ b, 0.1) * r[:, None]\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *order = NULL;
    for (size_t i = 0; i < n; i++)
        if (strstr (ideas[i], "i-k-j"))
            order = ideas[i];
    CHECK (order && kf_prompt_idea_feature (order) == KF_IDEA_OUTER);
    //  Rows 2 KiB apart: two a page, so 128 rows fill 64 TLB entries.
    CHECK (order && strstr (order, "2048 bytes: those rows spread over 2 of a 32 KiB 8-way L1's "
                                   "64 sets, so about 16 of them stay in L1 at once: a k block "
                                   "of no more rows keeps the strip there; and a k block of more "
                                   "than 128 rows walks more 4 KiB pages than the 64 entries a "
                                   "first-level data TLB commonly holds for them"));
    //  Candidate 4's walk: a row of A broadcast against B's row vectors.
    const char *ikj =
        "#include <immintrin.h>\n"
        "int kf_forward (const float *a, const float *b, const float *r, float *y)\n"
        "{\n"
        "    for (int i = 0; i < 384; i++)\n"
        "        for (int j = 0; j < 512; j += 8) {\n"
        "            __m256 acc = _mm256_setzero_ps ();\n"
        "            for (int k = 0; k < 1024; k++)\n"
        "                acc = _mm256_fmadd_ps (_mm256_broadcast_ss (a + i * 1024 + k),\n"
        "                                       _mm256_loadu_ps (b + k * 512 + j), acc);\n"
        "            _mm256_storeu_ps (y + i * 512 + j, _mm256_mul_ps (acc,\n"
        "                              _mm256_set1_ps (r[i])));\n"
        "        }\n"
        "    return 0;\n"
        "}\n";
    CHECK (kf_prompt_source_does (ikj, "c", KF_IDEA_OUTER));
    json_decref (spec);
}

int
main (void)
{
    test_order_idea ();
    test_busy_figures ();
    test_with_not_held ();
    test_meta_idea_words ();
    return kf_test_done ("test_round23");
}
