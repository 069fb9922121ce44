/*  kf_test_text.h - small helpers the prompt tests share: what a writer
 *  of one line prints, and where an idea of a feature stands in a list.
 */
#ifndef KF_TEST_TEXT_H
#define KF_TEST_TEXT_H

#include "../common/kf_str.h"
#include "../coordinator/kf_prompt_class.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What STATEMENT writes to the FILE * named F, into TEXT (a char *,
 * NULL when no stream could be opened; the caller frees). */
#define KF_TEST_CAPTURE(text, f, statement)              \
    do {                                                 \
        size_t kf_test_size_ = 0;                        \
        (text) = NULL;                                   \
        FILE *f = open_memstream (&(text), &kf_test_size_); \
        if (f) {                                         \
            statement;                                   \
            fclose (f);                                  \
        }                                                \
    } while (0)

/* The source of a kernel that starts 2 threads (#define NTHREADS 2), as
 * the feature reading sees one. */
#define KF_TEST_TWO_THREADS                                                 \
    "#include <pthread.h>\n#define NTHREADS 2\n"                             \
    "static void *work (void *a) { return a; }\n"                            \
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);\n" \
    "    pthread_join (t, 0); return 0; }\n"

/* The index in IDEAS (N) of the first idea about FEATURE, or N. */
static inline size_t
kf_test_idea_index (const char *const *ideas, size_t n, kf_idea_feature_t feature)
{
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == feature)
            return i;
    return n;
}

/* An elementwise PyTorch task whose forward(self, x) returns RET, over
 * one [2048][8192] f32 input (rtol 1e-2, atol 1e-5); the caller's. */
static inline json_t *
kf_test_ew_spec (const char *ret)
{
    char *src = kf_strdupf ("    def forward(self, x):\n        return %s\n", ret);
    json_t *spec = json_pack ("{s:[{s:s, s:[i, i], s:s}], s:[{s:s, s:[i, i], s:s}],"
                              " s:{s:s, s:s}, s:{s:f, s:f}}", "inputs", "name", "x", "shape",
                              2048, 8192, "dtype", "f32", "outputs", "name", "out0", "shape",
                              2048, 8192, "dtype", "f32", "reference", "language", "pytorch",
                              "source", src, "tolerance", "rtol", 1e-2, "atol", 1e-5);
    free (src);
    return spec;
}

/* The host's identity idea for kf_test_ew_spec (RET), or NULL. */
static inline const char *
kf_test_identity_idea (const char *ret)
{
    json_t *spec = kf_test_ew_spec (ret);
    size_t n = 0;
    const char *const *list = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    json_decref (spec);
    for (size_t i = 0; list && i < n; i++)
        if (strstr (list[i], "by an exact identity"))
            return list[i];
    return NULL;
}

/* Round 41's problems: the Gram matrix of x [1024][512], sigmoid(x @ x^T
 * / sqrt(512)), and sigmoid(g) * tanh(c) over two inputs of 4096 x 4096
 * (rtol 1e-2, atol 1e-5); the caller's. */
static inline json_t *
kf_test_gram_spec (void)
{
    return json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "gram", "inputs", "name", "in0", "shape", 1024, 512, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 1024, 1024, "dtype", "f32",
                      "reference", "language", "pytorch", "source",
                      "    def forward(self, x):\n"
                      "        return torch.sigmoid(x @ x.t() / inner ** 0.5)\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static inline json_t *
kf_test_cell_spec (void)
{
    return json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "cell", "inputs", "name", "in0", "shape", 4096, 4096, "dtype",
                      "f32", "name", "in1", "shape", 4096, 4096, "dtype", "f32", "outputs",
                      "name", "out0", "shape", 4096, 4096, "dtype", "f32", "reference",
                      "language", "pytorch", "source",
                      "    def forward(self, g, c):\n"
                      "        return torch.sigmoid(g) * torch.tanh(c)\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

/* The index in IDEAS (N) of the idea about cutting a kernel's own
 * instructions (kf_prompt_idea_cuts_code), or N. */
static inline size_t
kf_test_cut_index (const char *const *ideas, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_cuts_code (ideas[i]))
            return i;
    return n;
}

/* Rounds 39-41's host as its exec worker measured it: two AVX-512 cores,
 * all cores' cold read 36.9 GB/s and streaming copy 39.8. */
static inline json_t *
kf_test_epyc_host (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
                      " s:f, s:f, s:f, s:s}]}",
                      "backend", "host", "compile_isa", "avx512f", "devices", "name",
                      "AMD EPYC", "cores", 2, "physical_cores", 2, "clock_mhz_measured",
                      3693.0, "read_cold_one_core_gbs", 26.0, "read_cold_all_cores_gbs",
                      36.9, "copy_stream_one_core_gbs", 30.0, "copy_stream_all_cores_gbs",
                      39.8, "write_stream_one_core_gbs", 30.0,
                      "write_stream_all_cores_gbs", 39.0, "thread_start_join_us", 43.2,
                      "peak_gflops_one_core", 118.0, "peak_gflops_all_threads", 230.0,
                      "isa", "avx512f");
}

#endif
