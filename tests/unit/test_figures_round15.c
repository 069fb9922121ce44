/*  test_figures_round15.c - what round 15 of the model in the loop
 *  (/work/notes/round15-notes.md, docs/search.md "Fifteenth round") found
 *  in the figures a kernel's prompt gives, on atan_rsqrt's shapes (two
 *  2048 x 4096 f32 inputs, one output: N = 64 MiB, M = 32 MiB):
 *
 *  1. the position line counted N + M (96 MiB, "72% of the measured copy
 *     bandwidth") for candidate 1, whose ordinary stores each read their
 *     line first: it moved N + 2M = 128 MiB at 62 GB/s, 97% of 64 GB/s;
 *     N + M stays for a kernel of streaming stores, and the line says
 *     which count it used (round 17: against the copy figure, which
 *     counts N + M, the kernel counts N + M too; its N + 2M is set
 *     against the cold read rates: test_share_round17);
 *  2. no figure said how many cycles a vector of output took (candidate
 *     2, 2.85 ms on one thread: about 20, against a budget of 15): the
 *     position line of an elementwise task says so per thread in use;
 *  3. "its threads bought 24% of the call" set a two-thread kernel of
 *     ordinary stores against a one-thread one of streaming stores, and
 *     the tuning prompt said its threads "bought nothing measurable",
 *     while the same design on one thread (candidate 3, 2.95 ms against
 *     2.17 ms) was in the run: that twin is preferred in both;
 *  4. the tuning prompt quoted the median screen-against-full ratio only;
 *     it states the range and that screens rank the sweep's points.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../../common/kf_str.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f, s:f, s:f}}",
                      "name", "atan_rsqrt", "op", "atan_rsqrt", "description", "a task",
                      "inputs", "name", "in0", "shape", 2048, 4096, "dtype", "f32", "name",
                      "in1", "shape", 2048, 4096, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 2048, 4096, "dtype", "f32", "reference", "language", "pytorch",
                      "source",
                      "class Model(nn.Module):\n    def forward(self, x, y0):\n"
                      "        return torch.atan(x) * torch.rsqrt(x * x + 1) + 0.5 * y0\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5, "min_match", 0.99, "min_cosine",
                      0.99985);
}

//  Round 15's host: 2 cores at 3700 MHz, AVX-512, 64 GB/s copy on both.
static json_t *
s_host (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
                      " s:s}]}", "worker", "e1", "backend", "host", "compile_isa",
                      "sse4.2 avx2 avx512f", "devices", "name", "AMD EPYC", "cores", 2,
                      "physical_cores", 2, "clock_mhz_measured", 3700.0, "peak_gflops_one_core",
                      228.0, "peak_gflops", 400.0, "copy_bandwidth_gbs", 64.0,
                      "read_cold_one_core_gbs", 46.4, "read_cold_all_cores_gbs", 86.2,
                      "thread_start_join_us", 25.2, "isa", "sse4.2 avx2 avx512f");
}

static const char *s_ordinary =
    "#include <immintrin.h>\n#include <pthread.h>\n#define NTHREADS 2\n"
    "static void *work (void *a) { __m512 v = _mm512_setzero_ps ();\n"
    "    _mm512_storeu_ps ((float *) a, v); return a; }\n"
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);\n"
    "    pthread_join (t, 0); return 0; }\n";
static const char *s_streaming =
    "#include <immintrin.h>\n"
    "int kf_forward (float *out) { __m512 v = _mm512_setzero_ps ();\n"
    "    _mm512_stream_ps (out, v); _mm_sfence (); return 0; }\n";

//  A kernel of SOURCE timed at NS, the worker's N + M bytes and rate.
static json_t *
s_kernel (int id, const char *source, double ns)
{
    double bytes = 3.0 * 2048 * 4096 * 4;
    return json_pack ("{s:i, s:s, s:s, s:f, s:f, s:{s:f, s:f, s:f, s:b}}", "id", id, "source",
                      source, "status", "correct", "candidate_ns", ns, "speedup", 415.0,
                      "bandwidth", "bytes", bytes, "candidate_gbs", bytes / ns, "copy_gbs", 64.0,
                      "roofline_applies", 1);
}

static char *
s_position (json_t *k, json_t *spec, json_t *hw, kf_target_kind_t kind)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_position_line (f, k, spec, hw, kind);
    fclose (f);
    return text;
}

//  1. N + 2M for ordinary stores, N + M for streaming ones, said.
static void
s_test_write_allocate (void)
{
    json_t *spec = s_spec (), *hw = s_host ();
    json_t *k = s_kernel (1, s_ordinary, 2.17e6);
    char *p = s_position (k, spec, hw, KF_TARGET_HOST);
    printf ("%s", p ? p : "(none)\n");
    CHECK (kf_test_has (p, "memory: moves at least 96.0 MiB (N + M) at 46.4 GB/s, 72% of the "
                           "measured copy bandwidth (64 GB/s)"));
    CHECK (kf_test_has (p, " Counting N + 2M = 128.0 MiB, as it crosses the memory bus (each "
                           "ordinary store reads its line first: the code has no streaming "
                           "(non-temporal) stores), it moves 61.9 GB/s: 1.33 times the 46.4 "
                           "GB/s of one core's cold read rate and 72% of the 86.2 GB/s of all "
                           "cores' cold read rate."));
    free (p);
    json_decref (k);
    k = s_kernel (2, s_streaming, 2.85e6);
    p = s_position (k, spec, hw, KF_TARGET_HOST);
    CHECK (kf_test_has (p, "memory: moves at least 96.0 MiB (N + M) at 35.3 GB/s, 55% of the "
                           "measured copy bandwidth"));
    CHECK (kf_test_has (p, " Counting N + M = 96.0 MiB, as it crosses the memory bus (the code's "
                           "streaming (non-temporal) stores read no line first), it moves 35.3 "
                           "GB/s: 76% of the 46.4 GB/s of one core's cold read rate and 41% of "
                           "the 86.2 GB/s of all cores' cold read rate."));
    free (p);
    //  A GPU's stores are not the host's: its count stays as measured.
    p = s_position (k, spec, hw, KF_TARGET_CUDA);
    CHECK (p && !strstr (p, "Counting N") && !strstr (p, "(N + M)"));
    free (p);
    json_decref (k);
    json_decref (hw);
    json_decref (spec);
}

//  2. Cycles per vector of 16 lanes per thread: 2.85 ms on one thread
//  over 524288 vectors at 3700 MHz is about 20; 2.17 ms on two is 31.
static void
s_test_per_vector (void)
{
    json_t *spec = s_spec (), *hw = s_host ();
    json_t *k = s_kernel (2, s_streaming, 2.85e6);
    char *p = s_position (k, spec, hw, KF_TARGET_HOST);
    printf ("%s", p ? p : "(none)\n");
    CHECK (kf_test_has (p, "Per vector: 2.85 ms a call is about 20 cycles of each core per vector "
                           "of 16 f32 lanes (AVX-512) of output, on its one thread, at 3700 MHz "
                           "(time x clock x threads / 524288 vectors; derived)"));
    //  The budget as the Target section reckons it: N + M at one core's
    //  46.4 GB/s, 2.17 ms, 15 cycles a vector.
    CHECK (kf_test_has (p, "the arithmetic budget for one core, reckoned as in the Target section "
                           "with N + M at the cold read rates, is about 15."));
    free (p);
    json_decref (k);
    k = s_kernel (1, s_ordinary, 2.17e6);
    p = s_position (k, spec, hw, KF_TARGET_HOST);
    CHECK (kf_test_has (p, "Per vector: 2.17 ms a call is about 31 cycles of each core per vector "
                           "of 16 f32 lanes (AVX-512) of output, each of its 2 threads taking "
                           "1/2 of the vectors (the count its code defines)"));
    //  N + 2M = 128 MiB at all cores' 86.2 GB/s: 1.56 ms, 22 cycles.
    CHECK (kf_test_has (p, "the arithmetic budget for all cores, reckoned as in the Target "
                           "section with N + 2M at the cold read rates, is about 22."));
    free (p);
    //  No thread count in the code: the host's cores, said to be assumed.
    json_object_set_new (k, "source", json_string (strstr (s_ordinary, "static void")));
    p = s_position (k, spec, hw, KF_TARGET_HOST);
    CHECK (kf_test_has (p, "each of its 2 threads taking 1/2 of the vectors (assumed: one on "
                           "each core of the host, as its code fixes no count)"));
    free (p);
    //  Round 17: a bound (MAX_THREADS 8) is no count: the host's cores.
    char *bounded = kf_strdupf ("#define MAX_THREADS 8\n%s", strstr (s_ordinary, "static void"));
    json_object_set_new (k, "source", json_string (bounded));
    free (bounded);
    p = s_position (k, spec, hw, KF_TARGET_HOST);
    CHECK (kf_test_has (p, "each of its 2 threads taking 1/2 of the vectors (assumed: one on "
                           "each core of the host, as its code fixes no count)"));
    free (p);
    json_decref (k);
    json_decref (hw);
    json_decref (spec);
}

//  The run's history: candidate 1 (threads, SIMD), candidate 2 (SIMD and
//  streaming, one thread, the fastest one-thread kernel), candidate 3
//  (SIMD, one thread: candidate 1's design on one thread), all in full.
static json_t *
s_history (void)
{
    unsigned simd = 1u << KF_IDEA_SIMD, th = 1u << KF_IDEA_THREADS,
             st = 1u << KF_IDEA_STREAM;
    return json_pack ("[{s:i, s:s, s:s, s:f, s:i}, {s:i, s:s, s:s, s:f, s:i},"
                      " {s:i, s:s, s:s, s:f, s:i}]",
                      "id", 1, "status", "correct", "fidelity", "full", "candidate_ns", 2.17e6,
                      "features", (int) (simd | th),
                      "id", 2, "status", "correct", "fidelity", "full", "candidate_ns", 2.85e6,
                      "features", (int) (simd | st),
                      "id", 3, "status", "correct", "fidelity", "full", "candidate_ns", 2.95e6,
                      "features", (int) simd);
}

static char *
s_thread_cost (kf_prompt_in_t *in)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_thread_cost (f, in, NULL);
    fclose (f);
    return text;
}

//  3. The same design on one thread, in the kernel prompt and the tuning
//  prompt; the old comparison only where the run has none.
static void
s_test_twin (void)
{
    json_t *spec = s_spec (), *hw = s_host (), *history = s_history ();
    json_t *base = s_kernel (1, s_ordinary, 2.17e6);
    json_object_set_new (base, "parent_id", json_integer (3));
    //  The planner's summary: the fastest one-thread kernel is 2.
    json_t *ideas = json_pack ("{s:{s:i, s:{s:f, s:f}, s:i, s:f, s:i, s:f}}", "threads",
                               "threaded", 1, "one_thread", "2", 2.85e6, "3", 2.95e6,
                               "single_id", 2, "single_ns", 2.85e6, "threaded_id", 1,
                               "threaded_ns", 2.17e6);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .history = history, .ideas = ideas };
    double ns = 0;
    unsigned shared = 0;
    CHECK (kf_prompt_threads_twin (&in, base, &ns, &shared) == 3 && ns == 2.95e6
           && shared == 1u << KF_IDEA_SIMD);
    char *p = s_thread_cost (&in);
    printf ("%s\n", p ? p : "(none)");
    CHECK (kf_test_has (p, "against 2.95 ms for a kernel of like design on one thread "
                           "(candidate 3, whose code's features read as the kernel to improve's "
                           "less its threads: explicit SIMD (intrinsics or vector types); timed "
                           "in full; the features cannot tell a tile's shape): threads look to "
                           "have bought about 26% of the call (that kernel takes 1.36 times as "
                           "long)."));
    CHECK (p && !strstr (p, "fastest single-thread kernel's 2.85 ms"));
    free (p);
    //  No twin (candidate 3 screened only): the present comparison.
    json_object_set_new (json_array_get (history, 2), "fidelity", json_string ("screen"));
    CHECK (kf_prompt_threads_twin (&in, base, &ns, NULL) == 0);
    p = s_thread_cost (&in);
    //  Round 49: the gap of two kernels, not what its threads buy.
    CHECK (kf_test_has (p, "2.17 ms against the run's fastest single-thread kernel's 2.85 ms "
                           "(candidate 2), 24% less, a gap of two kernels that may differ in "
                           "more than threads, not what its threads buy."));
    CHECK (p && !strstr (p, "a kernel of like design on one thread"));
    free (p);
    json_object_set_new (json_array_get (history, 2), "fidelity", json_string ("full"));
    //  The tuning prompt: the twin's ratio, not the bandwidth reasoning
    //  (candidate 1's 46.4 GB/s of N + M is 100% of one core's cold read).
    kf_prompt_in_t tune = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                            .base = base, .history = history, .templated = true,
                            .tune_points = 8 };
    p = kf_prompt_build (&tune);
    const char *at = p ? strstr (p, "## Tuning parameters") : NULL;
    printf ("%s", at ? at : "(none)\n");
    CHECK (kf_test_has (at, "Candidate 1 starts threads, and this run holds a kernel of like "
                            "design on one thread: candidate 3, whose code's features read as "
                            "candidate 1's less its threads (explicit SIMD (intrinsics or vector "
                            "types)), takes 2.95 ms a call against candidate 1's 2.17 ms (timed "
                            "in full). So threads look to have bought about 26% of the call "
                            "(that kernel, its parent, takes 1.36 times as long)"));
    CHECK (at && !strstr (at, "measured no more than one core's worth"));
    free (p);
    //  Round 17: a twin that is neither parent nor child may differ in
    //  more than its threads; its one-thread form is not called measured.
    json_object_del (base, "parent_id");
    p = kf_prompt_build (&tune);
    CHECK (kf_test_has (p, "candidate 3 is neither its parent nor its child and may differ in "
                           "more than its threads"));
    CHECK (!kf_test_has (p, "the one-thread form is measured already"));
    free (p);
    json_object_set_new (base, "parent_id", json_integer (3));
    //  Without the twin, the bandwidth reasoning: candidate 1's 46.4 GB/s
    //  of N + M is 61.9 of N + 2M (its stores are ordinary), above one
    //  core's cold read, so not "one core's worth" (round 17: 43.5 GB/s
    //  of N + M was called 94% of one core's read).
    json_array_remove (history, 2);
    p = kf_prompt_build (&tune);
    CHECK (p && !strstr (p, "measured no more than one core's worth"));
    free (p);
    json_decref (ideas);
    json_decref (base);
    json_decref (history);
    json_decref (hw);
    json_decref (spec);
}

//  4. The screen-against-full range in the tuning prompt, and what it
//  does to a sweep ranked by screens.
static void
s_test_screen_range (void)
{
    json_t *spec = s_spec (), *hw = s_host ();
    json_object_set_new (hw, "screen_full_gap", json_real (1.46));
    json_object_set_new (hw, "screen_full_count", json_integer (9));
    json_object_set_new (hw, "screen_full_typical", json_real (1.07));
    json_t *base = s_kernel (2, s_streaming, 2.85e6);
    kf_prompt_in_t tune = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                            .base = base, .templated = true, .tune_points = 8 };
    char *p = kf_prompt_build (&tune);
    const char *at = p ? strstr (p, "## Tuning parameters") : NULL;
    CHECK (kf_test_has (at, "Screen against full in this run so far: the screen and "
                            "full-protocol figures of one kernel differed by 1.07x at the median "
                            "and up to 1.46x (over the 9 candidates timed both ways). The points "
                            "of this sweep are ranked by their screen figures and only the "
                            "fastest go on to the full protocol, so points whose screen figures "
                            "lie within 1.46x of each other are not separated"));
    //  Round 35: with a wide spread, coarse points rather than small
    //  steps; round 36: by the median gap (1.07x here), not one outlier.
    CHECK (at && !strstr (at, "So spend the points on choices"));
    free (p);
    json_object_set_new (hw, "screen_full_typical", json_real (1.30));
    p = kf_prompt_build (&tune);
    CHECK (kf_test_has (p, "So spend the points on choices that could move the time by more "
                           "than 30%"));
    free (p);
    json_object_set_new (hw, "screen_full_typical", json_real (1.07));
    //  Two candidates: no median, and said to bound nothing.
    json_object_set_new (hw, "screen_full_count", json_integer (2));
    json_object_del (hw, "screen_full_typical");
    p = kf_prompt_build (&tune);
    at = p ? strstr (p, "## Tuning parameters") : NULL;
    CHECK (kf_test_has (at, "differed by up to 1.46x (over the 2 candidates timed both ways; too "
                            "few to bound the spread, which can be larger)"));
    free (p);
    //  None timed both ways: nothing.
    json_object_del (hw, "screen_full_gap");
    p = kf_prompt_build (&tune);
    CHECK (p && !strstr (p, "Screen against full in this run so far: the screen"));
    free (p);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

int
main (void)
{
    s_test_write_allocate ();
    s_test_per_vector ();
    s_test_twin ();
    s_test_screen_range ();
    return kf_test_done ("test_figures_round15");
}
