/*  test_prompt.c - the generation prompt has every section the issue
 *  lists, in order, with the figures it is given; the evolvable sections
 *  sit between their markers and can be read back; SEARCH/REPLACE edits
 *  parse, apply inside the sections only, and are rejected with a reason
 *  when they do not apply (absent, ambiguous, outside the sections, a
 *  forged marker, too many); the offline meta-prompter proposes edits
 *  that carry the outcomes' real figures and apply cleanly.
 */
#include "../../coordinator/kf_meta.h"
#include "../../coordinator/kf_prompt.h"
#include "../../llm-gateway/kf_meta_offline.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_task (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                      " s:{s:s, s:s}}",
                      "name", "softmax", "description", "Row-wise softmax.", "instructions",
                      "Subtract the row maximum.", "inputs", "name", "x", "shape", 256, 2048,
                      "dtype", "f32", "outputs", "name", "y", "shape", 256, 2048, "dtype",
                      "f32", "reference", "language", "c", "source",
                      "int kf_forward (void) { return REFERENCE_BODY; }");
}

//  Position of NEEDLE in HAY, or -1.
static long
s_at (const char *hay, const char *needle)
{
    const char *p = hay ? strstr (hay, needle) : NULL;
    return p ? (long) (p - hay) : -1;
}

static void
s_build (void)
{
    json_t *spec = s_task ();
    json_t *hardware = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:s, s:i, s:I, s:i, s:f}]}",
                                  "worker", "exec-1", "backend", "cuda", "arch", "sm_90",
                                  "devices", "name", "NVIDIA H200", "compute_capability", "9.0",
                                  "multiprocessors", 132, "memory_bytes",
                                  (json_int_t) 150000000000LL, "l2_bytes", 62914560,
                                  "copy_bandwidth_gbs", 3923.4);
    json_t *best = json_pack ("{s:i, s:s, s:s, s:f, s:f, s:f, s:{s:f, s:f, s:f, s:f, s:b}}",
                              "id", 7, "source", "BEST_KERNEL_CODE", "status", "correct",
                              "speedup", 1.57, "candidate_ns", 41234.0, "reference_ns",
                              64738.0, "bandwidth", "bytes", 67108864.0, "candidate_gbs",
                              1627.5, "copy_gbs", 3923.4, "candidate_fraction_of_copy", 0.4148,
                              "roofline_applies", 1);
    json_t *last = json_pack ("{s:i, s:s, s:s, s:s, s:{s:i, s:f, s:f, s:f, s:f}}", "id", 9,
                              "source", "LAST_KERNEL_CODE", "status", "incorrect", "detail",
                              "set 2: 97.10% of elements within tolerance (need 99%)",
                              "correctness", "sets", 5, "match_fraction", 0.971, "max_abs_err",
                              0.0312, "max_rel_err", 0.874, "cosine", 0.99871);
    json_object_set_new (best, "profile",
                         json_string ("DRAM 41% of peak; 38% occupancy\nstalls: long scoreboard 52%"));
    json_t *insp = json_pack ("[{s:s, s:s, s:f}]", "source", "INSPIRATION_CODE", "coords",
                              "{2,2,2}", "speedup", 1.21);
    kf_prompt_in_t in = { .spec = spec, .language = "cuda", .target = "cuda:sm_90",
                          .hardware = hardware, .base = best, .base_is_best = true, .last = last,
                          .inspirations = insp,
                          .hints = "Consider warp shuffles for the row reduction." };
    char *p = kf_prompt_build (&in);
    CHECK (p != NULL);
    //  Every section, in the order of docs/prompts.md.
    const char *order[] = { "## Task: softmax", "Subtract the row maximum.",
                            "## Reference implementation", "REFERENCE_BODY",
                            "## The kernel contract", "int kf_forward(const kf_tensor_t *in",
                            "## Target", "NVIDIA H200", "## Example", "relu_kernel",
                            "## Kernel to improve: the best kernel so far", "BEST_KERNEL_CODE", "## Last kernel tried",
                            "LAST_KERNEL_CODE", "## Inspirations", "INSPIRATION_CODE",
                            "## Hints from the search so far", "warp shuffles",
                            "<<<kf:philosophy>>>", "<<<kf:strategies>>>", "<<<kf:pitfalls>>>",
                            "<<<kf:analysis>>>", "## Requirements", "## Answer" };
    long prev = -1;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        long at = s_at (p, order[i]);
        if (at <= prev)
            fprintf (stderr, "out of order or missing: %s\n", order[i]);
        CHECK (at > prev);
        prev = at;
    }
    //  The figures as given.
    CHECK (s_at (p, "compute capability 9.0") > 0);
    CHECK (s_at (p, "132 multiprocessors") > 0);
    CHECK (s_at (p, "60.0 MiB L2") > 0);
    CHECK (s_at (p, "Memory peak: 3923 GB/s") > 0);
    CHECK (s_at (p, "Runtime: 41.2 us (reference 64.7 us; 1.570x") > 0);
    CHECK (s_at (p, "41% of the measured copy bandwidth") > 0);
    CHECK (s_at (p, "Profile (Nsight Compute):\nDRAM 41% of peak") > s_at (p, "## Kernel to improve"));
    CHECK (s_at (p, "long scoreboard 52%") < s_at (p, "BEST_KERNEL_CODE"));
    CHECK (s_at (p, "97.1000% of elements within tolerance") > 0);
    CHECK (s_at (p, "max rel error 0.874") > 0);
    CHECK (s_at (p, "cosine similarity 0.998710") > 0);
    CHECK (s_at (p, "of the archive's cell {2,2,2}: memory tiled, algorithm reformulated, synchronisation warp") > 0);
    CHECK (s_at (p, "```cuda") > 0);
    CHECK (s_at (p, "kf-tune") < 0);   //  no tuning request unless asked
    CHECK (s_at (p, "Call nothing beyond the CUDA runtime") > s_at (p, "## Requirements"));
    //  The sections read back as the defaults for this task and target.
    json_t *dflt = kf_prompt_default_sections_for ("cuda", "cuda:sm_90", spec);
    for (int i = 0; i < KF_PROMPT_SECTIONS; i++) {
        char *text = kf_prompt_section_text (p, kf_prompt_section_names[i]);
        CHECK (text && !strcmp (text, json_string_value (json_object_get (
                                          dflt, kf_prompt_section_names[i]))));
        free (text);
    }
    free (p);
    //  A host profile names its profiler.
    json_object_set_new (best, "profiler", json_string ("perf"));
    p = kf_prompt_build (&in);
    CHECK (s_at (p, "Profile (perf stat):\nDRAM 41% of peak") > 0);
    CHECK (s_at (p, "Nsight Compute") < 0);
    json_object_del (best, "profiler");
    free (p);

    //  A task that allows cuBLAS and cuDNN says so instead.
    json_object_set_new (spec, "libraries", json_pack ("[s, s]", "cublas", "cudnn"));
    p = kf_prompt_build (&in);
    CHECK (s_at (p, "you may call cuBLAS (cublas_v2.h) and cuDNN (cudnn.h); the build links them")
           > s_at (p, "## Requirements"));
    CHECK (s_at (p, "Call nothing beyond") < 0);
    free (p);
    json_object_del (spec, "libraries");

    //  The last kernel that is also the best: its code is not repeated;
    //  a compile log is shown; evolved sections replace the defaults; a
    //  tuning prompt asks for kf-tune; unknown hardware is said as such.
    json_object_set_new (last, "id", json_integer (7));
    json_object_set_new (last, "log", json_string ("kernel.cu:3:5: error: expected ';'"));
    json_object_set_new (dflt, "pitfalls", json_string ("- EVOLVED PITFALL LINE\n"));
    kf_prompt_in_t in2 = { .spec = spec, .language = "c", .target = "host", .base = best,
                           .last = last, .sections = dflt, .templated = true };
    p = kf_prompt_build (&in2);
    CHECK (s_at (p, "LAST_KERNEL_CODE") < 0);
    //  A parent that is not the run's best is not called the best.
    CHECK (s_at (p, "## Kernel to improve") > 0);
    CHECK (s_at (p, "## Best kernel so far") < 0);
    CHECK (s_at (p, "EVOLVED PITFALL LINE") < 0);   //  no writing sections in tuning
    CHECK (s_at (p, "kf-tune: ") > 0);
    CHECK (s_at (p, "no exec worker has described its device") > 0);
    CHECK (s_at (p, "```c\n") > 0);
    free (p);
    //  The last kernel's block (a tuning prompt has verdict lines only,
    //  test_tune_round11): the same kernel is not shown twice, its log is.
    in2.templated = false;
    p = kf_prompt_build (&in2);
    CHECK (s_at (p, "LAST_KERNEL_CODE") < 0);
    CHECK (s_at (p, "It is the kernel above") > 0);
    CHECK (s_at (p, "EVOLVED PITFALL LINE") > s_at (p, "<<<kf:pitfalls>>>"));
    CHECK (s_at (p, "error: expected ';'") > 0);
    free (p);
    //  OpenCL C: the launch-line contract instead of kf_forward's.
    kf_prompt_in_t in3 = { .spec = spec, .language = "opencl", .target = "level-zero" };
    p = kf_prompt_build (&in3);
    CHECK (s_at (p, "kf-launch: KERNEL(") > 0);
    CHECK (s_at (p, "exports kf_forward") < 0 && s_at (p, "KF_KERNEL_ABI_VERSION") < 0);
    CHECK (s_at (p, "```opencl\n") > 0);
    free (p);
    json_decref (dflt);
    json_decref (spec);
    json_decref (hardware);
    json_decref (best);
    json_decref (last);
    json_decref (insp);
}

static void
s_edits (void)
{
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "- Be correct.\n",
                                  "strategies", "- Use float4.\n- Use shared memory.\n",
                                  "pitfalls", "- Guard the tail.\n", "analysis",
                                  "1. Count bytes.\n");
    const char *reply =
        "Diagnosis: tails were missed.\n"
        "SECTION: pitfalls\n"
        "<<<<<<< SEARCH\n- Guard the tail.\n=======\n- Guard the tail: n % 4 may be 1.\n"
        ">>>>>>> REPLACE\n"
        "**Section: strategies**\n"
        "<<<<<<< SEARCH\n=======\n- Reduce with warp shuffles.\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nUse\n=======\nPrefer\n>>>>>>> REPLACE\n"               // ambiguous
        "<<<<<<< SEARCH\nnot there at all\n=======\nx\n>>>>>>> REPLACE\n"       // absent
        "<<<<<<< SEARCH\nint kf_forward(\n=======\nint f(\n>>>>>>> REPLACE\n"   // outside
        "SECTION: analysis\n"
        "<<<<<<< SEARCH\n1. Count bytes.\n=======\n<<<kf:end analysis>>>\n>>>>>>> REPLACE\n"
        "SECTION: philosophy\n"
        "<<<<<<< SEARCH\n- Be correct.\n=======\n- Be correct, then fast.\n>>>>>>> REPLACE\n"
        "SECTION: analysis\n"                                                   // too many
        "<<<<<<< SEARCH\n1. Count bytes.\n=======\n1. Count bytes and flops.\n>>>>>>> REPLACE\n"
        "SECTION: nonsense\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nunterminated\n=======\n";
    json_t *edits = kf_meta_parse_edits (reply);
    CHECK (json_array_size (edits) == 9);
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (edits, 0), "section")),
                    "pitfalls"));
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (edits, 1), "section")),
                    "strategies"));
    CHECK (!json_object_get (json_array_get (edits, 2), "section"));
    json_t *log = NULL;
    json_t *out = kf_meta_apply_edits (sections, edits, 3, "## The kernel contract\nint kf_forward(x)\n",
                                       &log);
    CHECK (json_array_size (log) == 9);
    static const char *const want[] = {
        NULL, NULL, "ambiguous", "not found in any section", "outside the evolvable sections",
        "section marker", NULL, "too many edits", "too many edits"
    };
    for (size_t i = 0; i < 9; i++) {
        json_t *e = json_array_get (log, i);
        bool ok = json_is_true (json_object_get (e, "accepted"));
        const char *reason = json_string_value (json_object_get (e, "reason"));
        if (want[i] == NULL)
            CHECK (ok && !reason);
        else {
            CHECK (!ok && reason && strstr (reason, want[i]));
            if (!reason || !strstr (reason, want[i]))
                fprintf (stderr, "edit %zu: %s\n", i, reason ? reason : "(accepted)");
        }
    }
    CHECK (!strcmp (json_string_value (json_object_get (out, "pitfalls")),
                    "- Guard the tail: n % 4 may be 1.\n"));
    CHECK (!strcmp (json_string_value (json_object_get (out, "strategies")),
                    "- Use float4.\n- Use shared memory.\n- Reduce with warp shuffles.\n"));
    CHECK (!strcmp (json_string_value (json_object_get (out, "philosophy")),
                    "- Be correct, then fast.\n"));
    CHECK (!strcmp (json_string_value (json_object_get (out, "analysis")), "1. Count bytes.\n"));
    //  The input is untouched.
    CHECK (!strcmp (json_string_value (json_object_get (sections, "pitfalls")),
                    "- Guard the tail.\n"));
    //  A named section unknown to the prompt is refused by name.
    json_t *bad = json_pack ("[{s:s, s:s, s:s}]", "section", "nonsense", "search", "",
                             "replace", "x");
    json_t *log2 = NULL;
    json_t *out2 = kf_meta_apply_edits (sections, bad, 3, NULL, &log2);
    CHECK (strstr (json_string_value (json_object_get (json_array_get (log2, 0), "reason")),
                   "no evolvable section 'nonsense'"));
    json_decref (out2);
    json_decref (log2);
    json_decref (bad);
    json_decref (out);
    json_decref (log);
    json_decref (edits);
    json_decref (sections);
}

static void
s_offline_meta (void)
{
    json_t *sections = kf_prompt_default_sections ("c");
    json_t *outcomes = json_pack (
        "[{s:i, s:s, s:s}, {s:i, s:s, s:s, s:{s:f, s:f, s:f, s:f}},"
        " {s:i, s:s, s:s, s:{s:f, s:f, s:f, s:f}}, {s:i, s:s, s:f}]",
        "candidate_id", 1, "status", "compile_failed", "log",
        "kernel.c:4:1: error: unknown type name 'floatt'\nmore",
        "candidate_id", 2, "status", "incorrect", "detail", "set 1: 90% match", "correctness",
        "match_fraction", 0.9, "max_rel_err", 3.5, "max_abs_err", 0.25, "cosine", 0.9991,
        "candidate_id", 3, "status", "incorrect", "detail", "set 3: 98.5% match",
        "correctness", "match_fraction", 0.985, "max_rel_err", 0.5, "max_abs_err", 0.02,
        "cosine", 0.99990, "candidate_id", 4, "status", "correct", "speedup", 1.37);
    json_t *payload = json_pack ("{s:O, s:O, s:i}", "sections", sections, "outcomes", outcomes,
                                 "max_edits", 2);
    char *err = NULL;
    char *reply = kf_meta_offline_reply (payload, &err);
    CHECK (reply != NULL);
    //  The most common failure (wrong results, 2 of 4) first, with the
    //  worst figures of the two; the compile failure second; no third
    //  edit (max_edits 2).
    CHECK (s_at (reply, "2 of the last 4 kernels gave wrong results") > 0);
    CHECK (s_at (reply, "90.00% of elements within tolerance, max rel error 3.5") > 0);
    CHECK (s_at (reply, "1 of the last 4 kernels did not compile") > 0);
    CHECK (s_at (reply, "unknown type name 'floatt'") > 0);
    CHECK (s_at (reply, "Observed (wrong)") < s_at (reply, "Observed (compile)"));
    CHECK (s_at (reply, "Observed (speed)") < 0);
    json_t *edits = kf_meta_parse_edits (reply);
    CHECK (json_array_size (edits) == 2);
    json_t *log = NULL;
    json_t *out = kf_meta_apply_edits (sections, edits, 2, NULL, &log);
    size_t i;
    json_t *e;
    json_array_foreach (log, i, e)
        CHECK (json_is_true (json_object_get (e, "accepted")));
    CHECK (s_at (json_string_value (json_object_get (out, "pitfalls")), "Observed (wrong)") > 0);
    //  Next round, on the evolved sections, with one more wrong kernel:
    //  the failure lines are refreshed with the new figures (not added
    //  twice), and the speed line comes in.
    json_array_append_new (outcomes, json_pack ("{s:i, s:s, s:{s:f, s:f, s:f, s:f}}",
                                                "candidate_id", 5, "status", "incorrect",
                                                "correctness", "match_fraction", 0.5,
                                                "max_rel_err", 9.0, "max_abs_err", 1.5,
                                                "cosine", 0.9));
    json_object_set (payload, "outcomes", outcomes);
    json_object_set (payload, "sections", out);
    json_object_set_new (payload, "max_edits", json_integer (3));
    char *reply2 = kf_meta_offline_reply (payload, &err);
    json_t *edits2 = kf_meta_parse_edits (reply2);
    json_t *log2 = NULL;
    json_t *out2 = kf_meta_apply_edits (out, edits2, 3, NULL, &log2);
    CHECK (json_array_size (edits2) == 3);
    CHECK (s_at (reply2, "1 of the last 5 kernels did not compile") > 0);
    json_array_foreach (log2, i, e)
        CHECK (json_is_true (json_object_get (e, "accepted")));
    const char *pit = json_string_value (json_object_get (out2, "pitfalls"));
    CHECK (pit && strstr (pit, "Observed (wrong)")
           && !strstr (strstr (pit, "Observed (wrong)") + 1, "Observed (wrong)"));
    CHECK (s_at (json_string_value (json_object_get (out2, "philosophy")),
                 "1 of the last 5 kernels were correct, from 1.370x to 1.370x") > 0);
    CHECK (pit && strstr (pit, "3 of the last 5 kernels gave wrong results (worst: 50.00%"));
    //  A third round with nothing new proposes nothing: every line is
    //  already current.
    json_object_set (payload, "sections", out2);
    char *reply3 = kf_meta_offline_reply (payload, &err);
    json_t *edits3 = kf_meta_parse_edits (reply3);
    CHECK (reply3 && json_array_size (edits3) == 0);
    json_decref (edits3);
    free (reply3);
    json_object_set (payload, "sections", out);
    //  Deterministic: the same payload, the same reply.
    char *again = kf_meta_offline_reply (payload, &err);
    CHECK (again && !strcmp (again, reply2));
    //  No sections: an error, not a crash.
    json_t *empty = json_object ();
    CHECK (kf_meta_offline_reply (empty, &err) == NULL && err);
    free (err);
    json_decref (empty);
    free (again);
    free (reply2);
    json_decref (edits2);
    json_decref (log2);
    json_decref (out2);
    json_decref (out);
    json_decref (log);
    json_decref (edits);
    free (reply);
    json_decref (payload);
    json_decref (outcomes);
    json_decref (sections);
}

static void
s_settings (void)
{
    json_t *s = kf_meta_settings (NULL);
    CHECK (json_is_true (json_object_get (s, "meta_prompting")));
    CHECK (json_integer_value (json_object_get (s, "meta_every")) == KF_META_EVERY);
    CHECK (json_integer_value (json_object_get (s, "meta_max_edits")) == KF_META_MAX_EDITS);
    CHECK (json_integer_value (json_object_get (s, "prompt_archive")) == KF_META_ARCHIVE);
    CHECK (!strcmp (json_string_value (json_object_get (s, "meta_model")), "offline"));
    json_decref (s);
    json_t *cfg = json_pack ("{s:b, s:i, s:[{s:s, s:i}]}", "meta_prompting", 0, "meta_every", 2,
                             "models", "model", "openai:gpt-4.1", "weight", 1);
    s = kf_meta_settings (cfg);
    CHECK (json_is_false (json_object_get (s, "meta_prompting")));
    CHECK (json_integer_value (json_object_get (s, "meta_every")) == 2);
    CHECK (!strcmp (json_string_value (json_object_get (s, "meta_model")), "openai:gpt-4.1"));
    json_decref (s);
    json_object_set_new (cfg, "meta_model", json_string ("command:meta"));
    s = kf_meta_settings (cfg);
    CHECK (!strcmp (json_string_value (json_object_get (s, "meta_model")), "command:meta"));
    json_decref (s);
    json_decref (cfg);
}

int
main (void)
{
    s_build ();
    s_edits ();
    s_offline_meta ();
    s_settings ();
    return kf_test_done ("test_prompt");
}
