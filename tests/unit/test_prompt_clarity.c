/*  test_prompt_clarity.c - what a model answering the prompts of run r3
 *  found unclear or wrong (/tmp/kf-spool-r3/notes.md), one block each:
 *
 *  - the Target section calls compiled-for only the extensions the flags
 *    enable, and names the others the hosts have as not enabled;
 *  - cache sizes say which are per core and which shared;
 *  - the tuning example fits the target's core count, existing #defines
 *    are explained, and the point-order rule is one plain sentence;
 *  - this attempt's idea and its siblings' are not contradictory;
 *  - an accuracy line whose worst absolute error is above the absolute
 *    limit says why the kernel still passed, with the evaluator's rule;
 *  - a matrix product without an operation count gets 2*M*N*K from its
 *    shapes, labelled as derived, and only where the shapes are plain.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_linear (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f, s:f, s:f}}",
                      "name", "linear_elu", "op", "matmul", "description", "Linear + ELU.",
                      "inputs", "name", "x", "shape", 64, 384, "dtype", "f32", "outputs",
                      "name", "y", "shape", 64, 256, "dtype", "f32", "reference", "language",
                      "c", "source", "int kf_forward (void) { return 0; }", "tolerance",
                      "rtol", 0.01, "atol", 1e-5, "min_match", 0.99, "min_cosine", 0.99985);
}

//  A 2-core VM as the r3 run's exec worker described it.
static json_t *
s_vm (void)
{
    return json_pack ("{s:s, s:s, s:s, s:s, s:[{s:s, s:i, s:I, s:I, s:i, s:I, s:i, s:I, s:i,"
                      " s:s, s:f, s:f, s:s}]}",
                      "worker", "e1", "backend", "host", "arch", "x86_64", "compile_isa",
                      "sse4.2 avx avx2 fma avx512f avx512vnni avx512bf16 avx512fp16 avxvnni "
                      "amx-tile amx-bf16 amx-int8",
                      "devices", "name", "Xeon VM", "cores", 2, "memory_bytes",
                      (json_int_t) 25232932864LL, "l1d_bytes", (json_int_t) 49152,
                      "l1d_shared_cpus", 1, "l2_bytes", (json_int_t) 2097152, "l2_shared_cpus",
                      1, "l3_bytes", (json_int_t) 503316480, "l3_shared_cpus", 2, "isa",
                      "sse4.2 avx avx2 fma avx512f", "copy_bandwidth_gbs", 14.0,
                      "peak_gflops", 96.0, "peak_source", "avx512f");
}

static void
s_target (void)
{
    json_t *spec = s_linear (), *hw = s_vm ();
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "The code is compiled for the instruction sets the flags above enable "
                           "(sse4.2 avx avx2 fma avx512f avx512vnni), which every exec host of this "
                           "target has"));
    CHECK (kf_test_has (p, "The exec hosts also have avx512bf16 avx512fp16 avxvnni amx-tile amx-bf16 "
                           "amx-int8, but the flags do not enable them: their intrinsics do not "
                           "compile here."));
    CHECK (!kf_test_has (p, "(sse4.2 avx avx2 fma avx512f avx512vnni avx512bf16"));
    //  Per core or shared, as the worker counted the CPUs of each cache.
    CHECK (kf_test_has (p, "48 KiB L1d per core, 2.0 MiB L2 per core, 480.0 MiB L3 shared by both "
                           "cores"));
    free (p);
    //  All enabled: no second sentence.
    json_object_set_new (hw, "compile_isa", json_string ("sse4.2 avx avx2"));
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    json_object_set_new (d, "l3_shared_cpus", json_integer (16));
    json_object_set_new (d, "cores", json_integer (64));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "enable (sse4.2 avx avx2)") && !kf_test_has (p, "The exec hosts also have"));
    CHECK (kf_test_has (p, "480.0 MiB L3 shared by each group of 16 logical CPUs"));
    json_object_set_new (d, "l3_shared_cpus", json_integer (64));
    free (p);
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "480.0 MiB L3 shared by all 64 cores"));
    free (p);
    json_decref (hw);
    json_decref (spec);
}

static void
s_tuning (void)
{
    json_t *spec = s_linear (), *hw = s_vm ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 8, "source", "#define MR 8\n",
                              "status", "correct", "speedup", 50.0);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .templated = true, .tune_points = 8 };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "kf-tune: ROWS_PER_STEP=2,1,4 UNROLL=4,1,2,8 NTHREADS=2,1 */"));
    //  Round 21: advice, not a rule against a kernel of more workers.
    CHECK (kf_test_has (p, "Thread counts beyond the 2 cores of this host are allowed, but "
                           "pay only where the host's other work takes CPU time; a kernel "
                           "that starts more keeps its own count as the default"));
    CHECK (kf_test_has (p, "e.g. WORKERS_PER_CPU=2,1"));
    CHECK (!kf_test_has (p, "at most the 2 cores"));
    CHECK (!kf_test_has (p, "NTHREADS=1,4,8"));
    CHECK (kf_test_has (p, "A constant the kernel already has as a #define becomes a parameter when "
                           "you wrap it in #ifndef"));
    CHECK (kf_test_has (p, "Leave fixed, as a plain #define, a constant that the code's structure "
                           "hard-wires"));
    CHECK (!kf_test_has (p, "a combination of two changes that must be built should be the default"));
    CHECK (kf_test_has (p, "if you want such a combination timed for certain, make its values the "
                           "defaults"));
    free (p);
    //  One core: no thread count; 16 cores: 1, 8, 16.
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    json_object_set_new (d, "cores", json_integer (1));
    p = kf_prompt_build (&in);
    CHECK (!kf_test_has (p, "NTHREADS="));
    CHECK (kf_test_has (p, "this host has 1 core, so the thread count is no parameter"));
    free (p);
    json_object_set_new (d, "cores", json_integer (16));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "NTHREADS=2,1,8,16 */"));
    free (p);
    //  A GPU target gets GPU parameters, no host threads.
    in.language = "cuda";
    in.target = "cuda:sm_90";
    in.hardware = NULL;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "kf-tune: BLOCK=") && !kf_test_has (p, "NTHREADS") && !kf_test_has (p, "ROWS_PER_STEP"));
    free (p);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

static void
s_direction (void)
{
    json_t *spec = s_linear ();
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 0, .population = 2 };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "Attempt 1 of 2 in generation 0. This attempt's idea: "));
    CHECK (kf_test_has (p, "The sibling attempts of this generation take: "));
    CHECK (kf_test_has (p, "Build this kernel around this attempt's idea and leave that idea to the "
                           "sibling: use it only where your idea needs it, not as the main idea."));
    CHECK (!kf_test_has (p, "Explore a different idea from those"));
    CHECK (!kf_test_has (p, "Lean towards"));
    free (p);
    in.population = 3;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "leave those ideas to the siblings: use one of them only where your idea "
                           "needs it"));
    free (p);
    json_decref (spec);
}

static void
s_accuracy (void)
{
    json_t *spec = s_linear ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:{s:f, s:f, s:f, s:f}}", "id", 3,
                              "source", "CODE", "status", "correct", "speedup", 44.9,
                              "correctness", "match_fraction", 1.0, "max_abs_err", 1.53e-5,
                              "max_rel_err", 0.0544, "cosine", 1.0);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "max abs error 1.53e-05 (above the absolute limit 1e-05 only where the "
                           "relative error is below 0.01: those elements pass on the relative "
                           "limit);"));
    CHECK (kf_test_has (p, "an element passes when |got - want| / |want| < 0.01 or |got - want| <= "
                           "1e-05, either one sufficing;"));
    free (p);
    //  Both within their limits: no note, no rule.
    json_t *c = json_object_get (base, "correctness");
    json_object_set_new (c, "max_abs_err", json_real (2e-6));
    json_object_set_new (c, "max_rel_err", json_real (0.002));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "max abs error 2e-06;") && !kf_test_has (p, "either one sufficing"));
    free (p);
    //  An incorrect kernel's figures are not explained away.
    json_object_set_new (base, "status", json_string ("incorrect"));
    json_object_set_new (c, "max_abs_err", json_real (0.5));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "max abs error 0.5;") && !kf_test_has (p, "above the absolute limit"));
    free (p);
    json_decref (base);
    json_decref (spec);
}

//  A matrix (rank 2) or vector input.
static json_t *
s_in (const char *name, int a, int b)
{
    return b ? json_pack ("{s:s, s:[i,i], s:s}", "name", name, "shape", a, b, "dtype", "f32")
             : json_pack ("{s:s, s:[i], s:s}", "name", name, "shape", a, "dtype", "f32");
}

static void
s_flops (void)
{
    json_t *spec = s_linear ();
    json_t *inputs = json_object_get (spec, "inputs");
    json_array_append_new (inputs, s_in ("weight", 256, 384));
    json_array_append_new (inputs, s_in ("bias", 256, 0));
    long long mnk[3] = { 0, 0, 0 };
    //  nn.Linear: x [64,384], weight [256,384], out [64,256].
    CHECK (kf_prompt_matmul_flops (spec, mnk) == 2.0 * 64 * 256 * 384);
    CHECK (mnk[0] == 64 && mnk[1] == 256 && mnk[2] == 384);
    json_t *hw = s_vm ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f, s:f, s:{s:f, s:f, s:f}}", "id", 4,
                              "source", "CODE", "status", "correct", "speedup", 48.24,
                              "candidate_ns", 161000.0, "reference_ns", 7766000.0, "bandwidth",
                              "bytes", 558080.0, "candidate_gbs", 3.46, "copy_gbs", 14.0);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base };
    char *p = kf_prompt_build (&in);
    //  12582912 operations in 161 us: 78.2 GFLOP/s of the 96 measured.
    CHECK (kf_test_has (p, "compute: 78.2 GFLOP/s, 81.4% of the measured peak (96 GFLOP/s)"));
    CHECK (kf_test_has (p, "The compute figures count the matrix product's 2*M*N*K = 2*64*256*384 = "
                           "12.6 million operations, derived from the shapes"));
    CHECK (!kf_test_has (p, "compute: not known"));
    free (p);
    //  A task's own count wins, and is not called derived.
    json_object_set_new (base, "compute", json_pack ("{s:f, s:f, s:f}", "flops", 1.3e7,
                                                     "candidate_gflops", 80.0, "peak_gflops",
                                                     96.0));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "compute: 80") && !kf_test_has (p, "derived from the shapes"));
    free (p);
    //  torch.matmul: [M,K] x [K,N].
    json_object_set_new (json_array_get (inputs, 1), "shape", json_pack ("[i,i]", 384, 256));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 2.0 * 64 * 256 * 384);
    //  A third matrix (two layers?) or a batch: no count.
    json_array_append_new (inputs, s_in ("w2", 256, 256));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 0);
    json_array_remove (inputs, 3);
    json_object_set_new (json_array_get (inputs, 0), "shape", json_pack ("[i,i,i]", 8, 64, 384));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 0);
    //  Round 12: torch.bmm, every matrix of rank 3 with one batch size:
    //  8 products of 2*64*256*384 ("compute: not known" before).
    json_t *out0 = json_array_get (json_object_get (spec, "outputs"), 0);
    json_object_set_new (json_array_get (inputs, 1), "shape", json_pack ("[i,i,i]", 8, 384, 256));
    json_object_set_new (out0, "shape", json_pack ("[i,i,i]", 8, 64, 256));
    CHECK (kf_prompt_matmul_flops (spec, mnk) == 8 * 2.0 * 64 * 256 * 384);
    CHECK (mnk[0] == 64 && mnk[1] == 256 && mnk[2] == 384);
    json_object_del (base, "compute");
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "The compute figures count the 8 matrix products' B*2*M*N*K = "
                           "8*2*64*256*384 = 101 million operations, derived from the shapes"));
    free (p);
    //  ... but not two batch sizes.
    json_object_set_new (json_array_get (inputs, 1), "shape", json_pack ("[i,i,i]", 4, 384, 256));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 0);
    json_object_set_new (json_array_get (inputs, 1), "shape", json_pack ("[i,i]", 384, 256));
    json_object_set_new (out0, "shape", json_pack ("[i,i]", 64, 256));
    json_object_set_new (json_array_get (inputs, 0), "shape", json_pack ("[i,i]", 64, 384));
    //  An output the product does not give (a sum after it): no count.
    json_object_set_new (json_array_get (json_object_get (spec, "outputs"), 0), "shape",
                         json_pack ("[i,i]", 64, 1));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 0);
    //  Another class: no count, whatever the shapes.
    json_object_set_new (json_array_get (json_object_get (spec, "outputs"), 0), "shape",
                         json_pack ("[i,i]", 64, 256));
    CHECK (kf_prompt_matmul_flops (spec, NULL) > 0);
    json_object_set_new (spec, "op", json_string ("activation"));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 0);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

int
main (void)
{
    s_flops ();
    s_target ();
    s_tuning ();
    s_direction ();
    s_accuracy ();
    return kf_test_done ("test_prompt_clarity");
}
