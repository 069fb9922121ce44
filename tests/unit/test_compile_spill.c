/*  test_compile_spill.c - the register-spill report of a host build
 *  (compile-worker/kf_compile_spill.c) and its way into the prompt
 *  (coordinator/kf_prompt_standing.c): the counting on listings written
 *  here, a real build of a kernel that spills (twenty ymm accumulators,
 *  tests/fixtures/kernels/spill_ymm20.c) and of one that does not
 *  (nospill_ymm4.c), both for AVX2 and FMA, and the report in the prompt
 *  beside the vectoriser's. Run from the repository root.
 */
#include "../../compile-worker/kf_compile.h"
#include "../../compile-worker/kf_toolchain.h"
#include "../../coordinator/kf_prompt.h"
#include "kf_hash.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void
s_test_counting (void)
{
    const char *listing =
        "\nkernel.so:     file format elf64-x86-64\n\n"
        "Disassembly of section .text:\n\n"
        "0000000000001100 <kf_forward>:\n"
        "    1100:\tvmovaps %ymm3,-0x60(%rsp)\n"
        "    1106:\tvmovups %ymm4,0x20(%rsp)\n"
        "    110c:\tvmovups 0x20(%rsp),%ymm1\n"
        "    1112:\tvfmadd231ps -0x60(%rbp),%ymm2,%ymm0\n"     //  an operand, not a reload
        "    1118:\tvmovaps -0x40(%rbp),%zmm7\n"
        "    111e:\tvmovups %ymm5,(%rsp,%rax,4)\n"             //  a local array element
        "    1124:\tvmovss %xmm0,-0x4(%rsp)\n"                 //  a scalar
        "    112a:\tvmovups (%rdi),%ymm6\n"                    //  a load of the input
        "    1130:\tret\n\n"
        "0000000000001140 <hsum>:\n"
        "    1140:\tvmovups %ymm0,-0x28(%rsp)\n"               //  stored, read back as scalars
        "    1146:\tvmovss -0x28(%rsp),%xmm1\n"
        "    114c:\tret\n";
    char *r = kf_compile_spill_summary (listing, strlen (listing), "kernel.c");
    CHECK (r && !strncmp (r, KF_COMPILE_SPILL_MARK, strlen (KF_COMPILE_SPILL_MARK)));
    CHECK (r && strstr (r, " kf_forward has 2 instructions that store zmm registers to the stack "
                           "and 2 that load them back (none of them in a loop)."));
    CHECK (r && !strstr (r, "hsum"));
    CHECK (r && strstr (r, "16 ymm with AVX2, 32 zmm with AVX-512"));
    CHECK (r && strchr (r, '\n') == r + strlen (r) - 1);
    free (r);

    //  Nothing to say: no function both stores and loads; no listing.
    const char *clean = "0000000000001140 <hsum>:\n    1140:\tvmovups %ymm0,-0x28(%rsp)\n";
    CHECK (kf_compile_spill_summary (clean, strlen (clean), "kernel.c") == NULL);
    CHECK (kf_compile_spill_summary (NULL, 0, "kernel.c") == NULL);
    CHECK (kf_compile_spill_summary ("", 0, NULL) == NULL);

    //  Many functions, odd names, a line cut short: three named, the
    //  names' odd characters dropped, the rest counted, the text bounded.
    char big[16384];
    size_t used = 0;
    for (int i = 0; i < 70 && used + 400 < sizeof big; i++)
        used += (size_t) snprintf (big + used, sizeof big - used,
                                   "%016x <f%d`\x1b_%s>:\n    10:\tvmovaps %%ymm1,-0x20(%%rsp)\n"
                                   "    14:\tvmovaps -0x20(%%rsp),%%ymm%d\n%s",
                                   i * 64, i, i == 3 ? "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" : "",
                                   i % 16, i == 5 ? "    18:\tvmovaps -0x20(%rsp),%ymm2\n" : "");
    snprintf (big + used, sizeof big - used, "    20:\tvmovaps %%ymm1,-0x2");
    r = kf_compile_spill_summary (big, strlen (big), "kernel.c");
    CHECK (r && strstr (r, " f5_ has 1 instruction that stores ymm registers to the stack and 2 "
                           "that load them back"));
    CHECK (r && strstr (r, "; 61 more functions do so."));
    CHECK (r && !strchr (r, '`') && !strchr (r, '\x1b') && strlen (r) < 1000);
    free (r);

    //  With line tables (objdump -d -l --inlines of a -g build): each move
    //  counts at the candidate's line, an inlined intrinsic's at the line
    //  that inlined it, never at the header's; a header location without
    //  one leaves the line unknown, and another file's is none of ours.
    const char *lines =
        "0000000000001100 <kf_forward>:\n"
        "kf_forward():\n"
        "/tmp/kf-x/kernel.c:12\n"
        "    1100:\tvmovaps %zmm3,-0x60(%rsp)\n"
        "_mm512_fmadd_ps():\n"
        "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h:13368 (discriminator 3)\n"
        "inlined by /tmp/kf-x/kernel.c:50 (kf_forward)\n"
        "    1106:\tvmovaps 0x1c8(%rsp),%zmm1\n"
        "    110c:\tvmovaps %zmm1,0x1c8(%rsp)\n"
        "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h:13368 (discriminator 3)\n"
        "    1112:\tvmovaps 0x188(%rsp),%zmm1\n"
        "/tmp/kf-x/other.c:50\n"
        "    1118:\tvmovaps 0x148(%rsp),%zmm1\n"
        "/tmp/kf-x/kernel.c:46\n"
        "    111e:\tvmovaps 0x108(%rsp),%zmm2\n"
        "    1124:\tvmovaps %zmm2,0x108(%rsp)\n"
        "    112a:\tvmovaps 0xc8(%rsp),%zmm2\n"
        "inlined by /tmp/kf-x/kernel.c:50 (kf_forward)\n"
        "    1130:\tvmovaps 0x88(%rsp),%zmm1\n"
        "    1134:\tjne    1106 <kf_forward+0x6>\n"
        "    1136:\tjmp    1140 <kf_forward+0x40>\n"
        "    1138:\tvmovaps 0x88(%rsp),%zmm1\n"
        "    113c:\tret\n"
        //  No loop: a block after the return jumping back over it, and an
        //  unconditional jump back.
        "0000000000001200 <g>:\n"
        "    1200:\tvmovaps %ymm1,-0x20(%rsp)\n"
        "    1206:\tvmovaps -0x20(%rsp),%ymm1\n"
        "    120c:\tretq\n"
        "    120e:\tjne    1200 <g>\n"
        "    1210:\tjmp    1200 <g>\n";
    //  The loop is 1106 to 1134 (a backward jump): eight of the ten moves.
    r = kf_compile_spill_summary (lines, strlen (lines), "kernel.c");
    CHECK (r && strstr (r, " kf_forward has 3 instructions that store zmm registers to the stack "
                           "and 7 that load them back (8 of them in loops, at lines 46, 50; those "
                           "loops use 2 of the 32 vector registers);"));
    CHECK (r && strstr (r, " g has 1 instruction that stores ymm registers to the stack and 1 "
                           "that loads them back (none of them in a loop)."));
    free (r);
    //  Without a source name, no lines.
    r = kf_compile_spill_summary (lines, strlen (lines), NULL);
    CHECK (r && strstr (r, "and 7 that load them back (8 of them in loops; those loops use 2 of "
                           "the 32 vector registers);"));
    free (r);

    //  Why, as the loops holding the moves say (round 28: a count with its
    //  lines still left the cause to guess): a call in the loop keeps no
    //  vector register, else how many of them the loop uses.
    const char *calls =
        "0000000000001300 <h>:\n"
        "    1300:\tvmovaps %ymm0,0x20(%rsp)\n"
        "    1306:\tcall   1030 <expf@plt>\n"
        "    130b:\tvmovaps 0x20(%rsp),%ymm0\n"
        "    1311:\tjne    1300 <h>\n"
        "    1313:\tret\n";
    r = kf_compile_spill_summary (calls, strlen (calls), NULL);
    CHECK (r && strstr (r, "(all 2 of them in loops; those loops call expf@plt, and no vector "
                           "register keeps its value across a call, so every vector live across "
                           "it goes to the stack and back, once a pass beside the call's own "
                           "cost: it matters where such a loop is the compute, hardly where it "
                           "starts threads or hands out jobs)."));
    free (r);
    //  Round 42: "(none of them in a loop)" followed by "in a loop, on
    //  every pass".
    const char *flat = "0000000000001200 <g>:\n"
                       "    1200:\tvmovaps %ymm1,-0x20(%rsp)\n"
                       "    1206:\tvmovaps -0x20(%rsp),%ymm1\n"
                       "    120c:\tretq\n";
    r = kf_compile_spill_summary (flat, strlen (flat), NULL);
    CHECK (r && strstr (r, "(none of them in a loop). Unless the code keeps a local array or "
                           "struct of vectors (zeroed or copied by vector moves)"));
    CHECK (r && strstr (r, "adding memory traffic once a call, outside any loop.")
           && !strstr (r, "on every pass"));
    free (r);
    //  Round 41: a tile's loop (line 156) that calls nothing beside a
    //  scalar tail's loop (line 163) that calls expf read as "those loops
    //  call expf@plt": each part by its lines.
    const char *two =
        "0000000000001500 <kf_forward>:\n"
        "/tmp/kf-x/kernel.c:156\n"
        "    1500:\tvmovaps %zmm3,0x20(%rsp)\n"
        "    1506:\tvfmadd231ps %zmm1,%zmm2,%zmm3\n"
        "    150c:\tvmovaps 0x20(%rsp),%zmm3\n"
        "    1512:\tjne    1500 <kf_forward>\n"
        "/tmp/kf-x/kernel.c:163\n"
        "    1518:\tvmovaps %zmm4,0x60(%rsp)\n"
        "    151e:\tcall   1030 <expf@plt>\n"
        "    1523:\tvmovaps 0x60(%rsp),%zmm4\n"
        "    1529:\tjne    1518 <kf_forward+0x18>\n"
        "    152b:\tret\n";
    r = kf_compile_spill_summary (two, strlen (two), "kernel.c");
    CHECK (r && strstr (r, "(all 4 of them in loops, at lines 156, 163; the loop at line 163 "
                           "calls expf@plt, and no vector register keeps its value across a "
                           "call"));
    CHECK (r && strstr (r, "hands out jobs; the other loops call nothing and use 4 of the 32 "
                           "vector registers)."));
    free (r);
    char full[4096];
    int at_len = snprintf (full, sizeof full, "0000000000001400 <k>:\n"
                         "    1400:\tvmovaps %%ymm15,0x20(%%rsp)\n");
    for (int i = 0; i < 16; i++)
        at_len += snprintf (full + at_len, sizeof full - (size_t) at_len,
                          "    %x:\tvfmadd231ps %%ymm%d,%%ymm%d,%%ymm%d\n", 0x1410 + 8 * i,
                          i, (i + 1) % 16, (i + 2) % 16);
    snprintf (full + at_len, sizeof full - (size_t) at_len,
              "    1490:\tvmovaps 0x20(%%rsp),%%ymm15\n"
              "    1496:\tjne    1400 <k>\n"
              "    1498:\tret\n");
    r = kf_compile_spill_summary (full, strlen (full), NULL);
    CHECK (r && strstr (r, "(all 2 of them in loops; those loops use all 16 vector registers)."));
    free (r);
    //  A register above 15 says AVX-512's 32.
    char *z = strdup (full), *at = z ? strstr (z, "%ymm15,0x20") : NULL;
    if (at)
        memcpy (at, "%ymm16", 6);
    r = z ? kf_compile_spill_summary (z, strlen (z), NULL) : NULL;
    CHECK (r && strstr (r, "those loops use 17 of the 32 vector registers)."));
    free (r);
    free (z);
}

//  Builds tests/fixtures/kernels/NAME.c for AVX2 and FMA; the log, or NULL.
static char *
s_build (const char *name, double *wall_s)
{
    char path[256];
    snprintf (path, sizeof path, "tests/fixtures/kernels/%s.c", name);
    FILE *f = fopen (path, "rb");
    CHECK (f != NULL);
    if (!f)
        return NULL;
    char src[16384];
    size_t n = fread (src, 1, sizeof src - 1, f);
    fclose (f);
    src[n] = 0;
    char hash[65];
    kf_sha256_hex (src, n, hash);
    kf_compile_config_t cfg = { .time_limit_s = 60, .output_cap = 64 * 1024 };
    kf_job_t job = { .kind = "compile" };
    job.payload = json_pack ("{s:s, s:{s:s, s:s}, s:s}", "language", "c", "target", "backend", "host",
                             "arch", "avx2 fma", "source_hash", hash);
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, src, n);
    kf_job_result_t res = { 0 };
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    kf_compile_handle (&cfg, &job, &res);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    *wall_s = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    const char *log = json_string_value (json_object_get (res.result, "log"));
    CHECK (res.ok && json_is_true (json_object_get (res.result, "compiled")) && log);
    char *copy = log ? strdup (log) : NULL;
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    free (res.error);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    return copy;
}

//  GCC needs binutils, so objdump is almost always there; without it the
//  worker says nothing, and the checks that need it are skipped.
static bool
s_have_objdump (void)
{
    char *path = kf_toolchain_which ("objdump", NULL);
    if (!path)
        fprintf (stderr, "  no objdump in PATH: the checks of real builds are skipped\n");
    free (path);
    return path != NULL;
}

static void
s_test_build (void)
{
    if (!s_have_objdump ())
        return;
    double spill_s = 0, clean_s = 0;
    char *log = s_build ("spill_ymm20", &spill_s);
    const char *at = log ? strstr (log, KF_COMPILE_SPILL_MARK) : NULL;
    CHECK (at && strstr (at, " kf_forward has ") && strstr (at, "ymm registers to the stack"));
    //  The build's line tables place the spills: the fixture's loop is
    //  lines 39 to 60 (its weights reloaded there every pass).
    //  Twenty accumulators and twenty weights for AVX2's sixteen.
    CHECK (at && strstr (at, "those loops use all 16 vector registers"));
    const char *first = at ? strstr (at, " of them in loops, at lines ") : NULL;
    long line = first ? strtol (first + strlen (" of them in loops, at lines "), NULL, 10) : 0;
    CHECK (line >= 39 && line <= 60);
    //  After the vectoriser's summary, which the prompts cut at its mark.
    const char *vec = log ? strstr (log, KF_COMPILE_VEC_MARK) : NULL;
    CHECK (vec && at && vec < at);
    if (!at || getenv ("KF_TEST_VERBOSE"))
        fprintf (stderr, "  log:\n%s\n", log ? log : "(none)");
    free (log);
    log = s_build ("nospill_ymm4", &clean_s);
    CHECK (log && !strstr (log, KF_COMPILE_SPILL_MARK));
    free (log);
    fprintf (stderr, "  builds with the report: spill_ymm20 %.3f s, nospill_ymm4 %.3f s\n",
             spill_s, clean_s);
}

//  The report on an object in a folder: timed (what the compile pays
//  for it), and silent without objdump or without an object.
static void
s_test_report_runs (void)
{
    if (!s_have_objdump ())
        return;
    kf_subproc_limits_t l;
    kf_subproc_limits_default (&l);
    char *dir = kf_subproc_mkdtemp (&l);
    CHECK (dir != NULL);
    if (!dir)
        return;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "cc -O3 -march=x86-64 -mavx2 -mfma -std=c11 -shared -fPIC -Icommon "
              "tests/fixtures/kernels/spill_ymm20.c -o %s/kernel.so && echo junk > %s/junk.so",
              dir, dir);
    CHECK (system (cmd) == 0);
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    char *r = kf_compile_spill_report (dir, "kernel.so", "kernel.c", &l);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    CHECK (r && strstr (r, " kf_forward has "));
    free (r);
    fprintf (stderr, "  objdump and the count: %.1f ms\n",
             ((double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9) * 1e3);
    CHECK (kf_compile_spill_report (dir, "junk.so", "kernel.c", &l) == NULL);
    CHECK (kf_compile_spill_report (dir, "absent.so", "kernel.c", &l) == NULL);
    char *path = getenv ("PATH") ? strdup (getenv ("PATH")) : NULL;
    setenv ("PATH", "/nonexistent", 1);
    CHECK (kf_compile_spill_report (dir, "kernel.so", "kernel.c", &l) == NULL);
    if (path)
        setenv ("PATH", path, 1);
    free (path);
    kf_subproc_rmtree (dir);
    free (dir);
}

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "t", "op", "elementwise", "description", "a task", "inputs", "name",
                      "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0", "shape",
                      4096, "dtype", "f32", "reference", "language", "pytorch", "source",
                      "return torch.relu(x)", "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  The report reaches the prompt, for the parent and the last kernel,
//  and stays out of the last kernel's log block.
static void
s_test_prompt (void)
{
    //  The coordinator's copy of the mark is its own (no include of the
    //  compile worker's folder): the two must read the same.
    const char *src = "int kf_forward (void) { return 0; }";
    char log[2048];
    snprintf (log, sizeof log, "kernel.c:3:1: warning: unused variable 'q'\n"
              "%s 1 loop vectorised, 0 not.\n- line 7: vectorised, 32-byte vectors\n"
              "%s kf_forward has 24 instructions that store ymm registers to the stack and 31 "
              "that load them back. Unless ...\n", KF_COMPILE_VEC_MARK, KF_COMPILE_SPILL_MARK);
    json_t *spec = s_spec ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:s}", "id", 4, "source", src, "status",
                              "correct", "speedup", 3.0, "log", log);
    json_t *last = json_pack ("{s:i, s:s, s:s, s:f, s:s}", "id", 5, "source", src, "status",
                              "correct", "speedup", 2.0, "log", log);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .last = last, .generation = 1, .slot = 0, .population = 3 };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Compiler report for the parent (register spills, objdump -d of this "
                           "build): kf_forward has 24 instructions that store ymm registers"));
    CHECK (p && strstr (p, "Compiler report for it (register spills"));
    CHECK (p && strstr (p, "vectorised, 32-byte vectors\nCompiler report for the parent (register "
                           "spills"));
    CHECK (p && strstr (p, "load them back. Unless ...\n(Line numbers are of its source as shown.)"));
    const char *logblock = p ? strstr (p, "Log:\n") : NULL;
    const char *report_it = p ? strstr (p, "Compiler report for it") : NULL;
    CHECK (logblock && report_it && logblock < report_it
           && !memmem (logblock, (size_t) (report_it - logblock), "24 instructions", 15));
    free (p);

    //  A spill report without the vectoriser's (clang builds): shown
    //  alone, and still not in the log block.
    snprintf (log, sizeof log, "kernel.c:3:1: warning: unused variable 'q'\n%s kf_forward has 2 "
              "instructions that store ymm registers to the stack and 2 that load them back.\n",
              KF_COMPILE_SPILL_MARK);
    json_object_set_new (base, "log", json_string (log));
    json_object_set_new (last, "log", json_string (log));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Compiler report for the parent (register spills, objdump -d of this "
                           "build): kf_forward has 2 instructions"));
    CHECK (p && !strstr (p, "(Line numbers are of its source as shown.)"));
    free (p);
    //  One that names lines gets the note after it.
    snprintf (log, sizeof log, "%s kf_forward has 2 instructions that store ymm registers to the "
              "stack and 2 that load them back (4 of them in loops, at line 9).\n", KF_COMPILE_SPILL_MARK);
    json_object_set_new (base, "log", json_string (log));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "(4 of them in loops, at line 9).\n(Line numbers are of its source as "
                           "shown.)"));
    free (p);
    snprintf (log, sizeof log, "%s kf_forward has 2 instructions that store ymm registers to the "
              "stack and 2 that load them back (4 of them in loops, at lines 9-12).\n",
              KF_COMPILE_SPILL_MARK);
    json_object_set_new (base, "log", json_string (log));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "(4 of them in loops, at lines 9-12).\n(Line numbers are of its source "
                           "as shown.)"));
    logblock = p ? strstr (p, "Log:\n") : NULL;
    report_it = p ? strstr (p, "Compiler report for it") : NULL;
    CHECK (logblock && report_it && logblock < report_it
           && memmem (logblock, (size_t) (report_it - logblock), "unused variable", 15)
           && !memmem (logblock, (size_t) (report_it - logblock), "2 instructions", 14));
    free (p);
    json_decref (last);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    s_test_counting ();
    s_test_build ();
    s_test_report_runs ();
    s_test_prompt ();
    return kf_test_done ("test_compile_spill");
}
