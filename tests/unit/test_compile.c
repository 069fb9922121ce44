/*  test_compile.c - the compile handler with the real toolchains: a good
 *  source compiles to a loadable shared object whose hash is reported; a
 *  syntax error is a verdict (ok, compiled=false) whose trimmed log names
 *  the file and line without the temporary directory; managed memory is
 *  refused before nvcc runs; malformed jobs are job failures. */
#include "../../compile-worker/kf_compile.h"
#include "../../compile-worker/kf_toolchain.h"
#include "kf_hash.h"
#include "../kf_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *s_good =
    "#include \"kf_kernel.h\"\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx)\n"
    "{\n"
    "    (void) n_in; (void) n_out; (void) ctx;\n"
    "    const float *x = in[0].data; float *y = out[0].data;\n"
    "    for (int64_t i = 0; i < kf_numel (&in[0]); i++) y[i] = 2 * x[i];\n"
    "    return 0;\n"
    "}\n";

static const char *s_bad =
    "#include \"kf_kernel.h\"\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx)\n"
    "{\n"
    "    int x = ;\n"
    "    return 0;\n"
    "}\n";

//  A loop GCC vectorises (line 7) and one it cannot (line 8: expf).
static const char *s_two_loops =
    "#include \"kf_kernel.h\"\n"
    "#include <math.h>\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx)\n"
    "{\n"
    "    (void) n_in; (void) n_out; (void) ctx; const float *restrict x = in[0].data; float *restrict y = out[0].data; int64_t n = kf_numel (&in[0]);\n"
    "    for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];\n"
    "    for (int64_t i = 0; i < n; i++) y[i] += expf (x[i]);\n"
    "    return 0;\n"
    "}\n";

static void
s_job (kf_job_t *job, const char *language, const char *source, bool with_hash)
{
    memset (job, 0, sizeof *job);
    job->job_id = 1;
    job->kind = "compile";
    job->payload = json_pack ("{s:s, s:{s:s}}", "language", language,
                              "target", "backend",
                              strcmp (language, "cuda") == 0 ? "cuda" : "host");
    if (with_hash) {
        char hash[65];
        kf_sha256_hex (source, strlen (source), hash);
        json_object_set_new (job->payload, "source_hash", json_string (hash));
    }
    job->frames = zmsg_new ();
    zmsg_addmem (job->frames, source, strlen (source));
}

static void
s_job_free (kf_job_t *job, kf_job_result_t *res)
{
    json_decref (job->payload);
    zmsg_destroy (&job->frames);
    free (res->error);
    json_decref (res->result);
    zmsg_destroy (&res->frames);
}

int
main (void)
{
    kf_compile_config_t cfg = { .time_limit_s = 60, .output_cap = 64 * 1024 };
    kf_job_t job;
    kf_job_result_t res;

    //  The embedded header is the repository's header.
    size_t hsize;
    const char *header = kf_compile_kernel_header (&hsize);
    FILE *f = fopen ("common/kf_kernel.h", "rb");
    if (f) {
        char *disk = malloc (hsize + 16);
        size_t n = fread (disk, 1, hsize + 16, f);
        fclose (f);
        CHECK (n == hsize && memcmp (disk, header, hsize) == 0);
        free (disk);
    }
    CHECK (strstr (header, "kf_forward") != NULL);

    //  Good source.
    s_job (&job, "c", s_good, true);
    kf_compile_handle (&cfg, &job, &res);
    CHECK (res.ok);
    CHECK (json_is_true (json_object_get (res.result, "compiled")));
    CHECK (strstr (json_string_value (json_object_get (res.result, "toolchain")), "cc") != NULL);
    CHECK (json_real_value (json_object_get (res.result, "wall_s")) > 0);
    CHECK (res.frames && zmsg_size (res.frames) == 1);
    if (res.frames && zmsg_size (res.frames) == 1) {
        zframe_t *so = zmsg_first (res.frames);
        char hash[65];
        kf_sha256_hex (zframe_data (so), zframe_size (so), hash);
        CHECK (strcmp (hash, json_string_value (json_object_get (res.result, "artifact_hash"))) == 0);
        //  It loads and exports the entry point.
        char path[] = "/tmp/kf-test-compile-XXXXXX";
        int fd = mkstemp (path);
        CHECK (fd >= 0);
        if (fd >= 0) {
            CHECK (write (fd, zframe_data (so), zframe_size (so)) == (ssize_t) zframe_size (so));
            close (fd);
            void *lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
            CHECK (lib && dlsym (lib, "kf_forward"));
            if (lib)
                dlclose (lib);
            unlink (path);
        }
    }
    s_job_free (&job, &res);

    //  Round 5 (issue 15): the build itself writes GCC's vectoriser
    //  report, and its summary rides on the log: which loop vectorised at
    //  what width, which did not and why.
    s_job (&job, "c", s_two_loops, true);
    kf_compile_handle (&cfg, &job, &res);
    const char *vlog = json_string_value (json_object_get (res.result, "log"));
    CHECK (res.ok && json_is_true (json_object_get (res.result, "compiled")) && vlog);
    CHECK (vlog && strstr (vlog, KF_COMPILE_VEC_MARK " 1 loop vectorised, 1 not."));
    CHECK (vlog && strstr (vlog, "- line 7: vectorised, ") && strstr (vlog, "-byte vectors"));
    CHECK (vlog && strstr (vlog, "- line 8: not vectorised: "));
    if (vlog && !strstr (vlog, "- line 8: not vectorised: "))
        fprintf (stderr, "  log:\n%s\n", vlog);
    s_job_free (&job, &res);

    //  The summary is bounded and safe: cut reasons, no control characters
    //  or backquotes from the quoted code, at most KF_COMPILE_VEC_SHOWN loops.
    char report[16384] = "";
    for (int l = 1; l <= 30; l++) {
        size_t used = strlen (report);
        snprintf (report + used, sizeof report - used,
                  "kernel.c:%d:5: missed: couldn't vectorize loop\n"
                  "kernel.c:%d:9: missed: statement clobbers memory: ```\x1b[31m%s\n"
                  "header.h:%d:1: optimized: loop vectorized using 64 byte vectors\n", l, l,
                  "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", l);
    }
    strcat (report, "kernel.c:40:3: optimized: loop vectorized using 32 byte vectors\n"
                    "kernel.c:40:3: optimized: loop vectorized using 16 byte vectors\n");
    int vec = -1;
    char *sum = kf_compile_vec_summary (report, "kernel.c", &vec);
    CHECK (sum && vec == 1);
    CHECK (sum && strstr (sum, "1 loop vectorised, 30 not."));
    CHECK (sum && !strchr (sum, '`') && !strchr (sum, '\x1b'));
    CHECK (sum && strstr (sum, "(21 more loops not listed)"));
    CHECK (sum && strlen (sum) < (KF_COMPILE_VEC_SHOWN + 2) * (KF_COMPILE_VEC_REASON + 60));
    CHECK (sum && !strstr (sum, "header.h"));
    free (sum);
    CHECK (kf_compile_vec_summary ("", "kernel.c", &vec) == NULL && vec == 0);

    //  Round 6: an AVX-512 intrinsics kernel's report read "0 loops
    //  vectorised, N not". GCC 12's words for it: the loop, then the
    //  reason in the intrinsics header, the vector type on a line of its
    //  own. The summary says the code is explicit SIMD and what the report
    //  is about; a loop a branch kept scalar is named by its line, first.
    const char *simd_report =
        "kernel.c:4:23: missed: couldn't vectorize loop\n"
        "kernel.c:4:23: missed: not vectorized: multiple nested loops.\n"
        "kernel.c:7:31: missed: couldn't vectorize loop\n"
        "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h:6333:10: missed: not "
        "vectorized: no vectype for stmt: _33 = MEM[(__m512_u * {ref-all})_6];\n"
        " scalar_type: __m512_u\n"
        "kernel.c:9:14: missed: couldn't vectorize loop\n"
        "kernel.c:11:18: missed: not vectorized: no vectype for stmt: acc_7 = acc_3 + v_5;\n"
        " scalar_type: __m512\n"
        "kernel.c:13:23: optimized: loop vectorized using 64 byte vectors\n"
        "kernel.c:27:20: missed: couldn't vectorize loop\n"
        "kernel.c:27:20: missed: not vectorized: control flow in loop.\n";
    sum = kf_compile_vec_summary (simd_report, "kernel.c", &vec);
    printf ("%s", sum ? sum : "(none)\n");
    CHECK (sum && vec == 1 && strstr (sum, "1 loop vectorised, 4 not."));
    CHECK (sum && strstr (sum, "This code is explicit SIMD (intrinsics or vector types): the "
                               "report is about GCC's auto-vectoriser only"));
    CHECK (sum && strstr (sum, "2 of the loops not vectorised already work on whole vectors"));
    //  Round 31: such loops share one line, without the vectoriser's
    //  words for each.
    CHECK (sum && strstr (sum, "- lines 7, 9: not auto-vectorised: their statements are vector "
                               "operations already"));
    CHECK (sum && !strstr (sum, "- line 7:") && !strstr (sum, "its words"));
    //  The reason at the statement's line 11 is loop 9's, not a loop of
    //  its own.
    CHECK (sum && !strstr (sum, "line 11"));
    CHECK (sum && strstr (sum, "- line 4: not vectorised: not vectorized: multiple nested loops."));
    //  In explicit-SIMD code (round 9) a branch loop is likely one around
    //  the vector code: no clamp advice.
    const char *br = sum ? strstr (sum, "- line 27: not auto-vectorised because of a branch in the "
                                        "loop (not vectorized: control flow in loop.); in "
                                        "explicit-SIMD code") : NULL;
    CHECK (br && br < strstr (sum, "- line 4:"));
    CHECK (sum && strlen (sum) < 1600);
    free (sum);
    //  Plain C without vector types: no word of explicit SIMD; a branch
    //  past the listed ten is still named, first.
    char many[8192] = "";
    for (int l = 1; l <= 12; l++) {
        size_t used = strlen (many);
        snprintf (many + used, sizeof many - used,
                  "kernel.c:%d:5: optimized: loop vectorized using 32 byte vectors\n", l);
    }
    strcat (many, "kernel.c:40:3: missed: couldn't vectorize loop\n"
                  "kernel.c:40:3: missed: not vectorized: control flow in loop.\n");
    sum = kf_compile_vec_summary (many, "kernel.c", &vec);
    CHECK (sum && vec == 12 && strstr (sum, "12 loops vectorised, 1 not."));
    CHECK (sum && !strstr (sum, "explicit SIMD"));
    CHECK (sum && strstr (sum, "- line 40: not vectorised because of a branch in the loop"));
    CHECK (sum && strstr (sum, "(3 more loops not listed)"));
    free (sum);
    //  Round 7: a loop kept scalar by libm calls (GCC 12's words, after
    //  a branch of the same loop) is named for the call, not the branch;
    //  a copy GCC made a memcpy call of is not a defect.
    sum = kf_compile_vec_summary (
        "kernel.c:4:21: missed: couldn't vectorize loop\n"
        "kernel.c:4:21: missed: not vectorized: control flow in loop.\n"
        "kernel.c:4:60: missed: statement clobbers memory: _4 = expf (v_14);\n"
        "kernel.c:7:21: missed: couldn't vectorize loop\n"
        "kernel.c:7:136: missed: statement clobbers memory: __builtin_memcpy (_50, &tmp, 256);\n",
        "kernel.c", &vec);
    CHECK (sum && strstr (sum, "- line 4: not vectorised: it calls expf, which GCC does not "
                               "vectorise"));
    CHECK (sum && !strstr (sum, "because of a branch"));
    CHECK (sum && strstr (sum, "- line 7: a copy or fill GCC turned into a call to memcpy"));
    free (sum);
    //  Round 8: only libm calls are arithmetic to inline; a prefetch hint,
    //  a thread join or a sysconf are not.
    sum = kf_compile_vec_summary (
        "kernel.c:4:21: missed: couldn't vectorize loop\n"
        "kernel.c:4:60: missed: statement clobbers memory: __builtin_prefetch (_7);\n"
        "kernel.c:9:21: missed: couldn't vectorize loop\n"
        "kernel.c:9:60: missed: statement clobbers memory: _3 = pthread_join (_1, 0B);\n"
        "kernel.c:12:21: missed: couldn't vectorize loop\n"
        "kernel.c:12:60: missed: statement clobbers memory: _5 = __builtin_tanhf (_4);\n"
        "kernel.c:15:21: missed: couldn't vectorize loop\n"
        "kernel.c:15:60: missed: statement clobbers memory: _6 = expm1 (_4);\n",
        "kernel.c", &vec);
    CHECK (sum && strstr (sum, "- line 4: not vectorised: the loop holds a __builtin_prefetch"));
    CHECK (sum && strstr (sum, "- line 9: not vectorised: it calls pthread_join, no "
                               "arithmetic"));
    CHECK (sum && strstr (sum, "- line 12: not vectorised: it calls __builtin_tanhf, which GCC "
                               "does not vectorise"));
    CHECK (sum && strstr (sum, "- line 15: not vectorised: it calls expm1, which GCC"));
    CHECK (sum && !strstr (sum, "pthread_join, which GCC"));
    free (sum);
    //  Round 12: loops kept scalar by calls that are no arithmetic share
    //  one line, each function named once, after the other loops.
    sum = kf_compile_vec_summary (
        "kernel.c:79:21: missed: couldn't vectorize loop\n"
        "kernel.c:79:60: missed: statement clobbers memory: selu_rows (_1, _2);\n"
        "kernel.c:50:21: optimized: loop vectorized using 64 byte vectors\n"
        "kernel.c:105:21: missed: couldn't vectorize loop\n"
        "kernel.c:105:60: missed: statement clobbers memory: _3 = pthread_create (_1, 0B);\n"
        "kernel.c:106:21: missed: couldn't vectorize loop\n"
        "kernel.c:106:60: missed: statement clobbers memory: selu_rows (_4, _5);\n"
        "kernel.c:108:21: missed: couldn't vectorize loop\n"
        "kernel.c:108:60: missed: statement clobbers memory: _6 = pthread_join (_1, 0B);\n",
        "kernel.c", &vec);
    CHECK (sum && strstr (sum, "1 loop vectorised, 4 not.\n- line 50: vectorised, 64-byte "
                               "vectors\n- lines 79, 105, 106, 108: not vectorised: they call "
                               "selu_rows, pthread_create, pthread_join, no arithmetic (a library "
                               "or system call, or a function of the kernel's own that is not "
                               "inlined); nothing to fix unless one is the hot loop"));
    CHECK (sum && !strstr (sum, "more loop"));
    free (sum);
    //  Round 14: GCC 12 at -O3 -march=x86-64 -mavx512f (its own words)
    //  reports a loop at 64 then 32 bytes, the second its epilogue; the
    //  model read "also a copy with 32-byte vectors" as GCC preferring
    //  256-bit vectors. A loop of 8 floats vectorised at 32 bytes only is
    //  narrower than the others; a report that is 32 bytes at most (AVX2)
    //  gets no AVX-512 line.
    sum = kf_compile_vec_summary (
        "kernel.c:2:23: optimized: loop vectorized using 32 byte vectors\n"
        "kernel.c:6:23: optimized: loop vectorized using 64 byte vectors\n"
        "kernel.c:6:23: optimized: loop vectorized using 32 byte vectors\n"
        "kernel.c:7:14: optimized: basic block part vectorized using 32 byte vectors\n",
        "kernel.c", &vec);
    printf ("%s", sum ? sum : "(none)\n");
    CHECK (sum && vec == 2 && strstr (sum, "- line 6: vectorised, 64-byte vectors; its 32-byte "
                                           "copy is the loop's remainder (epilogue), for the "
                                           "iterations left after the last full 64-byte "
                                           "vector\n"));
    CHECK (sum && !strstr (sum, "also a copy"));
    CHECK (sum && strstr (sum, "- line 2: vectorised, 32-byte vectors, narrower than the "
                               "64-byte vectors of other loops (GCC picked this width for "
                               "this loop's trip count or data types)\n"));
    CHECK (sum && strstr (sum, "At these flags GCC vectorises plain loops with 64-byte "
                               "(AVX-512) vectors; a narrower copy of a loop is its remainder, "
                               "so no pragma or target attribute is needed"));
    free (sum);
    sum = kf_compile_vec_summary (
        "kernel.c:2:23: optimized: loop vectorized using 32 byte vectors\n"
        "kernel.c:2:23: optimized: loop vectorized using 16 byte vectors\n"
        "kernel.c:10:23: optimized: loop vectorized using 32 byte vectors\n",
        "kernel.c", &vec);
    CHECK (sum && strstr (sum, "- line 2: vectorised, 32-byte vectors; its 16-byte copy is the "
                               "loop's remainder"));
    CHECK (sum && strstr (sum, "- line 10: vectorised, 32-byte vectors\n"));
    CHECK (sum && !strstr (sum, "AVX-512") && !strstr (sum, "narrower"));
    free (sum);
    //  Round 9: a streaming store intrinsic is vector code already.
    sum = kf_compile_vec_summary (
        "kernel.c:112:21: missed: couldn't vectorize loop\n"
        "kernel.c:112:60: missed: statement clobbers memory: __builtin_ia32_movntps512 (_5, _6);\n",
        "kernel.c", &vec);
    CHECK (sum && strstr (sum, "- line 112: not auto-vectorised: its statements are vector "
                               "operations already"));
    free (sum);
    //  Round 7: the mish kernel of intrinsics got no explicit-SIMD note,
    //  its report naming no vector type (a call, control flow); the source
    //  says it. Words in a comment are no intrinsics.
    const char *no_type =
        "kernel.c:30:5: missed: couldn't vectorize loop\n"
        "kernel.c:30:5: missed: not vectorized: control flow in loop.\n"
        "kernel.c:41:5: missed: couldn't vectorize loop\n"
        "kernel.c:41:60: missed: statement clobbers memory: _4 = expf (v_14);\n";
    //  Round 25: intrinsics that compute; loads and stores alone are no
    //  explicit SIMD (test_round25).
    const char *intrin = "#include <immintrin.h>\nvoid f (float *y, const float *x) {\n"
                         "  __m512 v = _mm512_loadu_ps (x);\n"
                         "  _mm512_storeu_ps (y, _mm512_mul_ps (v, v));\n}\n";
    const char *plain = "/* a port of _mm512_loadu_ps (x) code, __m512 */\n"
                        "void f (float *y, const float *x) { y[0] = x[0]; }\n";
    sum = kf_compile_vec_summary_src (no_type, "kernel.c", intrin, strlen (intrin), &vec);
    CHECK (sum && strstr (sum, "This code is explicit SIMD (intrinsics or vector types, in its "
                               "source): the report is about GCC's auto-vectoriser only"));
    //  Round 9: a loop a branch kept scalar in such code is most likely a
    //  loop around the vector code (a GEMM's block bounds): no clamp advice.
    CHECK (sum && strstr (sum, "- line 30: not auto-vectorised because of a branch in the loop "
                               "(not vectorized: control flow in loop.); in explicit-SIMD code "
                               "usually a loop around the vector code"));
    CHECK (sum && !strstr (sum, "each clamp its own select"));
    free (sum);
    sum = kf_compile_vec_summary_src (no_type, "kernel.c", plain, strlen (plain), &vec);
    CHECK (sum && strstr (sum, "each clamp its own select"));
    CHECK (sum && !strstr (sum, "explicit SIMD"));
    free (sum);
    sum = kf_compile_vec_summary (no_type, "kernel.c", &vec);
    CHECK (sum && !strstr (sum, "explicit SIMD"));
    free (sum);
    CHECK (kf_compile_source_simd (intrin, strlen (intrin)));
    CHECK (!kf_compile_source_simd (plain, strlen (plain)));
    CHECK (kf_compile_source_simd ("float32x4_t v;", 14) && !kf_compile_source_simd (NULL, 0));

    //  Syntax error: a verdict, with a log naming kernel.c line 5 first.
    s_job (&job, "c", s_bad, false);
    kf_compile_handle (&cfg, &job, &res);
    CHECK (res.ok);
    CHECK (json_is_false (json_object_get (res.result, "compiled")));
    CHECK (json_is_null (json_object_get (res.result, "artifact_hash")));
    CHECK (res.frames == NULL);
    const char *log = json_string_value (json_object_get (res.result, "log"));
    CHECK (log && strncmp (log, "kernel.c:5:", 11) == 0);
    CHECK (log && strstr (log, "error") != NULL);
    CHECK (log && strstr (log, "/tmp/") == NULL);
    CHECK (log && strlen (log) <= KF_COMPILE_LOG_MAX);
    s_job_free (&job, &res);

    //  Managed memory is refused before compiling (whether or not nvcc
    //  is installed the refusal comes first).
    const char *managed =
        "#include \"kf_kernel.h\"\n__managed__ float g[16];\n"
        "extern \"C\" int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out,\n"
        "  int n_out, const kf_ctx_t *ctx) { return 0; }\n";
    s_job (&job, "cuda", managed, false);
    kf_compile_handle (&cfg, &job, &res);
    char *nvcc = kf_toolchain_nvcc.find ();
    if (nvcc) {
        CHECK (res.ok);
        CHECK (json_is_false (json_object_get (res.result, "compiled")));
        log = json_string_value (json_object_get (res.result, "log"));
        CHECK (log && strstr (log, "managed memory") && strstr (log, "__managed__"));
        CHECK (json_real_value (json_object_get (res.result, "wall_s")) == 0);
    }
    else
        CHECK (!res.ok);
    s_job_free (&job, &res);

    //  Vendor libraries: a cuBLAS call links only when the task allows
    //  cuBLAS; otherwise the linker names the missing symbol.
    const char *cublas =
        "#include <cublas_v2.h>\n#include \"kf_kernel.h\"\n"
        "extern \"C\" int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out,\n"
        "  int n_out, const kf_ctx_t *ctx) {\n"
        "  static cublasHandle_t h; if (!h && cublasCreate (&h)) return 1;\n"
        "  cublasSetStream (h, (cudaStream_t) ctx->stream); return 0; }\n";
    if (nvcc) {
        s_job (&job, "cuda", cublas, false);
        kf_compile_handle (&cfg, &job, &res);
        log = json_string_value (json_object_get (res.result, "log"));
        CHECK (res.ok && json_is_false (json_object_get (res.result, "compiled")));
        CHECK (log && strstr (log, "cublasCreate"));
        s_job_free (&job, &res);
        s_job (&job, "cuda", cublas, false);
        json_object_set_new (job.payload, "libraries", json_pack ("[s]", "cublas"));
        kf_compile_handle (&cfg, &job, &res);
        CHECK (res.ok && json_is_true (json_object_get (res.result, "compiled")));
        s_job_free (&job, &res);
    }
    free (nvcc);
    s_job (&job, "cuda", cublas, false);
    json_object_set_new (job.payload, "libraries", json_pack ("[s]", "m -lpthread"));
    kf_compile_handle (&cfg, &job, &res);
    CHECK (!res.ok && res.error && strstr (res.error, "unknown library 'm -lpthread'"));
    s_job_free (&job, &res);
    CHECK (kf_compile_uses_managed ("cudaMallocManaged(&p, n);", 25, NULL));
    CHECK (!kf_compile_uses_managed ("cudaMalloc(&p, n);", 18, NULL));

    //  Job failures: unknown language, hash mismatch, no source frame.
    s_job (&job, "fortran", s_good, false);
    kf_compile_handle (&cfg, &job, &res);
    CHECK (!res.ok && res.error && strstr (res.error, "fortran"));
    s_job_free (&job, &res);
    s_job (&job, "c", s_good, false);
    json_object_set_new (job.payload, "source_hash", json_string ("00"));
    kf_compile_handle (&cfg, &job, &res);
    CHECK (!res.ok && res.error && strstr (res.error, "source_hash"));
    s_job_free (&job, &res);
    s_job (&job, "c", s_good, false);
    zmsg_destroy (&job.frames);
    job.frames = zmsg_new ();
    kf_compile_handle (&cfg, &job, &res);
    CHECK (!res.ok);
    s_job_free (&job, &res);

    //  Log trimming: error lines first, paths stripped, size bounded.
    char *big = malloc (20000);
    size_t used = 0;
    used += sprintf (big + used, "/tmp/kf-abc/kernel.c: In function 'f':\n");
    for (int i = 0; i < 300; i++)
        used += sprintf (big + used, "/tmp/kf-abc/kernel.c:%d:1: warning: unused\n", i);
    sprintf (big + used, "/tmp/kf-abc/kernel.c:999:2: error: boom\n");
    char *trimmed = kf_compile_trim_log (big, "/tmp/kf-abc", KF_COMPILE_LOG_MAX);
    CHECK (trimmed && strncmp (trimmed, "kernel.c:999:2: error: boom\n", 28) == 0);
    CHECK (trimmed && strlen (trimmed) <= KF_COMPILE_LOG_MAX);
    CHECK (trimmed && strstr (trimmed, "more lines omitted") != NULL);
    CHECK (trimmed && strstr (trimmed, "/tmp/kf-abc") == NULL);
    free (trimmed);
    free (big);

    //  Capabilities name cc and the host backend.
    json_t *caps = kf_compile_capabilities ();
    CHECK (json_string_value (json_object_get (json_object_get (caps, "toolchains"), "cc")) != NULL);
    CHECK (json_string_value (json_array_get (json_object_get (caps, "backends"), 0)) != NULL);
    CHECK (json_string_value (json_object_get (caps, "arch")) != NULL);
    json_decref (caps);
    return kf_test_done ("test_compile");
}
