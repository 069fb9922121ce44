/*  test_share_round17.c - what round 17 of the model in the loop
 *  (/work/notes/round17-notes.md, findings 6 and 7; docs/search.md
 *  "Seventeenth round") found in the memory-bound judgements, on
 *  log1p_tanh_gate's shapes (two 2048 x 4096 f32 inputs, one output: N =
 *  64 MiB, M = 32 MiB) and its host (a memcpy on both cores 64 GB/s, one
 *  core's cold read 46.4 GB/s, all cores' 86.2):
 *
 *  1. one kernel (8 threads, ordinary stores, 2.32 ms) read "moves at
 *     least 128.0 MiB at 57.9 GB/s, 90% of the measured copy bandwidth",
 *     N + 2M set against a copy that counts N + M: one writer of the
 *     share (kf_prompt_memory_share) counts N + M against the copy (68%)
 *     and N + 2M against the cold read rates (1.25 times one core's, 67%
 *     of all cores');
 *  2. the planner's bound rule took that 90% for the memory bound and
 *     paired every idea that moves no fewer bytes with one that does: it
 *     sets the kernel against all cores' cold read now, 67%, and hands
 *     the idea alone;
 *  3. the cold estimate with ordinary stores, N + 2M = 128 MiB at one core's
 *     cold read (about 2.9 ms), was stated nowhere: the Target section
 *     gives it beside N + M's, on one core and on all cores.
 */
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}}",
                      "name", "log1p_tanh_gate", "op", "log1p_tanh_gate", "description",
                      "a task", "inputs", "name", "x", "shape", 2048, 4096, "dtype", "f32",
                      "name", "g", "shape", 2048, 4096, "dtype", "f32", "outputs", "name",
                      "out0", "shape", 2048, 4096, "dtype", "f32", "reference", "language",
                      "pytorch", "source",
                      "class Model(nn.Module):\n    def forward(self, x, g):\n"
                      "        return torch.log1p(x.abs()) * torch.tanh(g)\n");
}

static json_t *
s_host (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f}]}", "worker", "e1",
                      "backend", "host", "devices", "name", "AMD EPYC", "cores", 2,
                      "physical_cores", 2, "clock_mhz_measured", 3625.0,
                      "copy_bandwidth_gbs", 64.0, "read_cold_one_core_gbs", 46.4,
                      "read_cold_all_cores_gbs", 86.2);
}

//  Round 17's candidate, trimmed: eight threads, ordinary stores.
static const char *s_threaded =
    "#include <pthread.h>\n#define NTHREADS 8\n"
    "static void *work (void *a) { float *o = a; o[0] = 1.0f; return a; }\n"
    "int kf_forward (float *out) { pthread_t t[NTHREADS];\n"
    "    for (int i = 0; i < NTHREADS; i++) pthread_create (&t[i], 0, work, out);\n"
    "    for (int i = 0; i < NTHREADS; i++) pthread_join (t[i], 0); return 0; }\n";
static const char *s_streaming =
    "#include <immintrin.h>\n"
    "int kf_forward (float *out) { __m512 v = _mm512_setzero_ps ();\n"
    "    _mm512_stream_ps (out, v); _mm_sfence (); return 0; }\n";

//  The worker's figures for a call of NS: N + M bytes and rate.
static json_t *
s_kernel (const char *source, double ns)
{
    double bytes = 3.0 * 2048 * 4096 * 4;
    return json_pack ("{s:i, s:s, s:s, s:f, s:f, s:{s:f, s:f, s:f, s:b}}", "id", 2, "source",
                      source, "status", "correct", "candidate_ns", ns, "speedup", 163.0,
                      "bandwidth", "bytes", bytes, "candidate_gbs", bytes / ns, "copy_gbs", 64.0,
                      "roofline_applies", 1);
}

//  1. Each rate with the traffic it counts.
static void
s_test_share (json_t *spec, json_t *hw)
{
    json_t *k = s_kernel (s_threaded, 2.32e6), *bw = json_object_get (k, "bandwidth");
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    kf_stores_t stores = kf_prompt_stores (k, spec, "c", KF_TARGET_HOST);
    CHECK (stores == KF_STORES_ORDINARY);
    kf_share_t s = kf_prompt_memory_share (bw, spec, d, stores, KF_SHARE_COPY);
    CHECK (!strcmp (s.traffic, "N + M") && !s.doubled && s.share > 0.67 && s.share < 0.68);
    CHECK (!strcmp (s.rate_name, "the measured copy bandwidth") && s.rate == 64.0);
    s = kf_prompt_memory_share (bw, spec, d, stores, KF_SHARE_ONE_CORE);
    CHECK (!strcmp (s.traffic, "N + 2M") && s.doubled && s.gbs > 57.8 && s.gbs < 58.0);
    CHECK (s.bytes == 4.0 * 2048 * 4096 * 4 && s.share > 1.24 && s.share < 1.25);
    CHECK (!strcmp (s.rate_name, "one core's cold read rate"));
    s = kf_prompt_memory_share (bw, spec, d, stores, KF_SHARE_ALL_CORES);
    CHECK (!strcmp (s.traffic, "N + 2M") && s.share > 0.67 && s.share < 0.68);
    //  Streaming stores read no line first; a GPU's stores are unknown:
    //  N + M against every rate.
    json_t *sk = s_kernel (s_streaming, 2.85e6);
    stores = kf_prompt_stores (sk, spec, "c", KF_TARGET_HOST);
    CHECK (stores == KF_STORES_STREAMING);
    s = kf_prompt_memory_share (json_object_get (sk, "bandwidth"), spec, d, stores,
                                KF_SHARE_ONE_CORE);
    CHECK (!strcmp (s.traffic, "N + M") && !s.doubled && s.share > 0.76 && s.share < 0.77);
    CHECK (kf_prompt_stores (k, spec, "cuda", KF_TARGET_CUDA) == KF_STORES_UNKNOWN);
    //  No cold read on one core: its copy counted as its whole traffic,
    //  the write-allocate read too (1.5 x 40), against N + 2M.
    json_t *warm = json_pack ("{s:f}", "copy_one_core_gbs", 40.0);
    s = kf_prompt_memory_share (bw, spec, warm, KF_STORES_ORDINARY, KF_SHARE_ONE_CORE);
    CHECK (s.rate == 60.0 && !strcmp (s.traffic, "N + 2M")
           && !strcmp (s.rate_name, "one core's copy rate counted as its whole traffic"));
    json_decref (warm);
    json_decref (sk);
    json_decref (k);
}

//  1. The position line: N + M against the copy, N + 2M against the reads.
static void
s_test_position (json_t *spec, json_t *hw)
{
    json_t *k = s_kernel (s_threaded, 2.32e6);
    char *p = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&p, &size);
    if (!f)
        return;
    kf_prompt_position_line (f, k, spec, hw, KF_TARGET_HOST);
    fclose (f);
    printf ("%s", p ? p : "(none)\n");
    CHECK (kf_test_has (p, "memory: moves at least 96.0 MiB (N + M) at 43.4 GB/s, 68% of the "
                           "measured copy bandwidth (64 GB/s)"));
    CHECK (kf_test_has (p, " Counting N + 2M = 128.0 MiB, as it crosses the memory bus (each "
                           "ordinary store reads its line first: the code has no streaming "
                           "(non-temporal) stores), it moves 57.9 GB/s: 1.25 times the 46.4 "
                           "GB/s of one core's cold read rate and 67% of the 86.2 GB/s of all "
                           "cores' cold read rate."));
    CHECK (p && !strstr (p, "90%") && !strstr (p, "128.0 MiB at"));
    free (p);
    json_decref (k);
}

//  2. The planner: 67% of all cores' cold read is below the bound, so an
//  idea that moves no fewer bytes goes alone.
static void
s_test_bound (json_t *spec, json_t *hw)
{
    json_t *k = s_kernel (s_threaded, 2.32e6);
    kf_share_t s = kf_search_idea_memory_share (k, spec, hw, KF_TARGET_HOST);
    CHECK (s.share > 0.67 && s.share < 0.68 && !strcmp (s.traffic, "N + 2M")
           && !strcmp (s.rate_name, "all cores' cold read rate"));
    size_t n = 0, simd = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    while (simd < n && kf_prompt_idea_feature (ideas[simd]) != KF_IDEA_SIMD)
        simd++;
    CHECK (simd < n);
    if (simd < n)
        CHECK (kf_search_idea_pair (ideas, n, simd, s.share, 0, -1, NULL, NULL) == -1);
    json_decref (k);
}

//  3. The floors: N + 2M = 128 MiB at 46.4 GB/s is 2.89 ms on one core,
//  1.56 ms at all cores' 86.2; N + M's 2.17 and 1.17 beside them.
static void
s_test_floors (json_t *hw)
{
    char *p = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&p, &size);
    if (!f)
        return;
    kf_prompt_task_cold_text (f, 2.0 * 2048 * 4096 * 4, 2048.0 * 4096 * 4,
                              json_array_get (json_object_get (hw, "devices"), 0));
    fclose (f);
    CHECK (kf_test_has (p, "N + M, the cold estimate with streaming stores, takes about 2.17 ms on one "
                           "core and 1.17 ms on all cores"));
    CHECK (kf_test_has (p, "N + 2M = 128.0 MiB, the cold estimate with ordinary stores (each reads its "
                           "line first), about 2.89 ms on one core and 1.56 ms on all cores"));
    free (p);
}

int
main (void)
{
    json_t *spec = s_spec (), *hw = s_host ();
    s_test_share (spec, hw);
    s_test_position (spec, hw);
    s_test_bound (spec, hw);
    s_test_floors (hw);
    json_decref (hw);
    json_decref (spec);
    return kf_test_done ("test_share_round17");
}
