/*  test_tune_round11.c - what the model of round 11 flagged in the tuning
 *  prompts (/work/notes/round11-notes.md, the six "TUNING round" notes),
 *  one block each:
 *
 *  - what was tried from the kernel to template is one verdict line each,
 *    never another kernel's code (kf_prompt_tune_tried);
 *  - a threaded kernel that measures no more than one core's worth is
 *    called so, with 1 asked for among its thread counts;
 *  - the example kf-tune line lists each kernel default first, and a
 *    sentence says so;
 *  - the defaults must reproduce the parent, unless the answer says
 *    otherwise;
 *  - the gradient's hint and a move's record never read as opposite
 *    advice in consecutive lines (kf_gradient_hints).
 */
#include "../../coordinator/kf_gradient.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_tune.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

//  torch.matmul (a [64,128], b [128,256]): 2*64*256*128 = 4194304 flops.
static json_t *
s_matmul (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f, s:f, s:f}}",
                      "name", "matmul_scale_tanh", "op", "matmul", "description",
                      "tanh(a @ b * s).", "inputs", "name", "a", "shape", 64, 128, "dtype", "f32",
                      "name", "b", "shape", 128, 256, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 64, 256, "dtype", "f32", "reference", "language", "c", "source",
                      "int kf_forward (void) { return 0; }", "tolerance", "rtol", 0.01, "atol",
                      1e-5, "min_match", 0.99, "min_cosine", 0.99985);
}

//  A host of CORES cores with the one-core figures of round 11's host.
static json_t *
s_host (int cores)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:f, s:f}]}", "worker", "e1",
                      "backend", "host", "devices", "name", "Xeon VM", "cores", cores,
                      "peak_gflops_one_core", 229.0, "peak_gflops", 458.0,
                      "copy_one_core_gbs", 12.0, "copy_stream_one_core_gbs", 10.0);
}

static const char *s_threaded =
    "#include <pthread.h>\n#define NTHREADS 2\n"
    "static void *work (void *a) { return a; }\n"
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, work, 0);\n"
    "    pthread_join (t, 0); return 0; }\n";

static char *
s_tried (const kf_prompt_in_t *in)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_tune_tried (f, in);
    fclose (f);
    return text;
}

//  1. Candidate 18's 175 lines beside candidate 5's template: the tried
//  kernels are verdict lines, their code and log left out.
static void
s_tried_lines (void)
{
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 5, "source", "BASE_CODE", "status",
                              "correct", "speedup", 34.6);
    json_t *last = json_pack ("{s:i, s:s, s:s, s:f, s:f, s:s}", "id", 18, "source",
                              "LAST_KERNEL_CODE", "status", "correct", "speedup", 33.0,
                              "candidate_ns", 1.79e6, "log", "LAST_KERNEL_LOG");
    json_t *children = json_pack ("[{s:i, s:i, s:s}, {s:i, s:i, s:s}]", "id", 18, "generation",
                                  2, "reason", "correct, 1.79 ms, slower than the parent", "id",
                                  12, "generation", 1, "reason", "incorrect: set 1");
    kf_prompt_in_t in = { .base = base, .last = last, .children = children, .templated = true };
    char *p = s_tried (&in);
    CHECK (kf_test_has (p, "## Tried from this kernel so far"));
    CHECK (kf_test_has (p, "the template keeps candidate 5's structure"));
    CHECK (kf_test_has (p, "- candidate 18 (generation 2): correct, 1.79 ms, slower than the parent\n"));
    CHECK (kf_test_has (p, "- candidate 12 (generation 1): incorrect: set 1\n"));
    //  The last kernel is among the children: listed once, no code.
    CHECK (s_count (p, "candidate 18") == 1);
    CHECK (!kf_test_has (p, "LAST_KERNEL_CODE") && !kf_test_has (p, "LAST_KERNEL_LOG"));
    CHECK (!kf_test_has (p, "## Last kernel tried") && !kf_test_has (p, "```"));
    free (p);
    //  A last kernel not among the children: one verdict line of its own.
    in.children = NULL;
    p = s_tried (&in);
    CHECK (kf_test_has (p, "- candidate 18 (the last kernel tried from it): correct, 1.79 ms a call, "
                           "33.000x the reference's speed\n"));
    CHECK (!kf_test_has (p, "LAST_KERNEL_CODE"));
    free (p);
    //  Nothing tried: nothing written.
    in.last = NULL;
    p = s_tried (&in);
    CHECK (p && !*p);
    free (p);
    json_decref (base);
    json_decref (last);
    json_decref (children);
}

static char *
s_tuning_prompt (json_t *spec, json_t *hw, json_t *base, const char *language,
                 const char *target)
{
    kf_prompt_in_t in = { .spec = spec, .language = language, .target = target,
                          .hardware = hw, .base = base, .templated = true, .tune_points = 8 };
    return kf_prompt_build (&in);
}

//  1b. The tuning prompt itself (kf_prompt.c's s_standing calls
//  kf_prompt_tune_tried in place of its two blocks); a kernel prompt
//  keeps them.
static void
s_tried_in_prompt (void)
{
    json_t *spec = s_matmul (), *hw = s_host (2);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 5, "source", "BASE_CODE", "status",
                              "correct", "speedup", 34.6);
    json_t *last = json_pack ("{s:i, s:s, s:s, s:f}", "id", 18, "source", "LAST_KERNEL_CODE",
                              "status", "correct", "speedup", 33.0);
    json_t *children = json_pack ("[{s:i, s:i, s:s}]", "id", 18, "generation", 2, "reason",
                                  "correct, 1.79 ms, slower than the parent");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base, .last = last, .children = children, .templated = true,
                          .tune_points = 8 };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "## Tried from this kernel so far"));
    CHECK (kf_test_has (p, "- candidate 18 (generation 2): correct, 1.79 ms, slower than the parent"));
    CHECK (p && !kf_test_has (p, "LAST_KERNEL_CODE"));
    CHECK (p && !kf_test_has (p, "## Recent attempts from the kernel to improve")
           && !kf_test_has (p, "## Last kernel tried"));
    free (p);
    in.templated = false;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "## Last kernel tried from the kernel to improve (candidate 18)") && kf_test_has (p, "LAST_KERNEL_CODE"));
    CHECK (p && !kf_test_has (p, "## Tried from this kernel so far"));
    free (p);
    json_decref (children);
    json_decref (last);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

//  2. Candidate 17: two threads, 181 GFLOP/s, 79% of one core's 229.
static void
s_one_core (void)
{
    json_t *spec = s_matmul (), *hw = s_host (2);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:{s:f}}", "id", 17, "source", s_threaded,
                              "status", "correct", "speedup", 35.5, "compute",
                              "candidate_gflops", 181.0);
    char *p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "Candidate 17 starts threads, yet it measured no more than one core's "
                           "worth: 181.0 GFLOP/s, 79% of the 229.0 GFLOP/s one core reaches alone"));
    CHECK (kf_test_has (p, "Make the thread count a parameter and put 1 among its values, after the "
                           "count candidate 17 starts"));
    //  Round 15: "its threads bought nothing measurable" of a kernel whose
    //  one-thread form took 1.36 times as long.
    CHECK (kf_test_has (p, "that does not show what its threads bought"));
    CHECK (p && !strstr (p, "bought nothing measurable"));
    if (kf_test_has (p, "## Tuning parameters"))
        printf ("%s", strstr (p, "## Tuning parameters"));
    free (p);
    //  Above one core's peak: the threads paid, nothing said.
    json_object_set_new (json_object_get (base, "compute"), "candidate_gflops",
                         json_real (300.0));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (p && !kf_test_has (p, "starts threads, yet"));
    free (p);
    //  No compute figure of its own: 2*M*N*K over its time (181 GFLOP/s).
    json_object_del (base, "compute");
    json_object_set_new (base, "candidate_ns", json_real (4194304.0 / 181.0));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "measured no more than one core's worth: 181.0 GFLOP/s, 79%"));
    free (p);
    //  One thread (pthread_create only in a comment): nothing said.
    json_object_set_new (base, "source",
                         json_string ("/* no pthread_create here */\nint kf_forward (void) "
                                      "{ return 0; }\n"));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (p && !kf_test_has (p, "starts threads, yet"));
    free (p);
    //  A memory-bound threaded kernel: 9 GB/s of N + M, 11.6 of N + 2M
    //  (round 17: its ordinary stores read each line first), against
    //  one core's copy counted as its whole traffic, 1.5 x 12 (the
    //  write-allocate read too; the streaming copy's 10 is less).
    json_decref (base);
    base = json_pack ("{s:i, s:s, s:s, s:f, s:{s:f}}", "id", 9, "source", s_threaded,
                      "status", "correct", "speedup", 2.76, "bandwidth", "candidate_gbs", 9.0);
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "Candidate 9 starts threads, yet it measured no more than one core's "
                           "worth: 11.6 GB/s counting N + 2M (each ordinary store reads its "
                           "line first: the code has no streaming (non-temporal) stores), 64% "
                           "of the 18.0 GB/s of one core's copy rate counted as its whole "
                           "traffic (warm caches; the kernel's bytes are timed cold)"));
    free (p);
    //  Round 13: the same figure timed beside other work says nothing.
    json_object_set_new (base, "host_load",
                         json_pack ("{s:i, s:f, s:f}", "cpus", 2, "runnable_others", 1.1,
                                    "others_cpu_share", 0.6));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (p && !kf_test_has (p, "starts threads, yet"));
    free (p);
    json_object_del (base, "host_load");
    //  ... nor does a bandwidth far below one core's copy rate (an erf
    //  kernel bound by its arithmetic at 36% of it).
    json_object_set_new (json_object_get (base, "bandwidth"), "candidate_gbs",
                         json_real (4.3));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (p && !kf_test_has (p, "starts threads, yet"));
    free (p);
    json_object_set_new (json_object_get (base, "bandwidth"), "candidate_gbs",
                         json_real (20.0));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (p && !kf_test_has (p, "starts threads, yet"));
    free (p);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

//  3. The example lists each default first, and says so.
static void
s_example_order (void)
{
    json_t *spec = s_matmul (), *hw = s_host (2);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 5, "source", "#define MR 8\n",
                              "status", "correct", "speedup", 34.6);
    char *p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "kf-tune: ROWS_PER_STEP=2,1,4 UNROLL=4,1,2,8 NTHREADS=2,1 */"));
    CHECK (!kf_test_has (p, "NTHREADS=1,2 */") && !kf_test_has (p, "UNROLL=1,2,4"));
    CHECK (kf_test_has (p, "Each list starts with the kernel's own default, the value of its "
                           "#define, then the other values: the example is for a kernel with #define "
                           "ROWS_PER_STEP 2 and #define UNROLL 4 that starts 2 threads (#define "
                           "NTHREADS 2), so its list is NTHREADS=2,1"));
    free (p);
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    json_object_set_new (d, "cores", json_integer (16));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "NTHREADS=2,1,8,16 */"));
    free (p);
    json_object_set_new (d, "cores", json_integer (1));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "kf-tune: ROWS_PER_STEP=2,1,4 UNROLL=4,1,2,8 */") && !kf_test_has (p, "NTHREADS="));
    CHECK (kf_test_has (p, "its lists begin ROWS_PER_STEP=2 and UNROLL=4"));
    free (p);
    p = s_tuning_prompt (spec, NULL, base, "cuda", "cuda:sm_90");
    CHECK (kf_test_has (p, "kf-tune: BLOCK=256,128,512 VEC=4,1,2 */"));
    CHECK (kf_test_has (p, "#define BLOCK 256 and #define VEC 4"));
    CHECK (kf_test_has (p, "`kf-tune: SMEM=1,0 TILE=32,16,64 when SMEM=1`"));
    CHECK (p && !kf_test_has (p, "starts threads, yet"));
    free (p);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

//  4. The defaults are the parent's; another default only when said.
static void
s_defaults (void)
{
    json_t *spec = s_matmul (), *hw = s_host (2);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 5, "source", "#define KC 256\n",
                              "status", "correct", "speedup", 34.6);
    char *p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "The defaults must reproduce candidate 5 as it is: each default is the "
                           "value candidate 5 uses, so the all-defaults point, the first one built, "
                           "is candidate 5 itself"));
    CHECK (kf_test_has (p, "A default may differ from candidate 5's choice only where you say so in "
                           "your Analysis"));
    CHECK (kf_test_has (p, "make its values the defaults and say so in your Analysis, keeping the "
                           "parent's values in the lists"));
    free (p);
    //  A template swept before: its winner becomes the defaults instead.
    json_object_set_new (base, "configs",
                         json_pack ("[{s:{s:i}, s:s, s:f}, {s:{s:i}, s:s, s:f}]", "params",
                                    "KC", 256, "verdict", "correct", "speedup", 30.0, "params",
                                    "KC", 512, "verdict", "correct", "speedup", 34.6));
    p = s_tuning_prompt (spec, hw, base, "c", "host");
    CHECK (kf_test_has (p, "make the winning values the defaults"));
    CHECK (p && !kf_test_has (p, "The defaults must reproduce"));
    free (p);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

static kf_transition_t
s_move (int pm, int cm, double pf, double cf, bool novel)
{
    kf_transition_t t = { { pm, 0, 0 }, { cm, 0, 0 }, pf, cf, novel, 0 };
    return t;
}

//  5. Round 11: "memory access more elaborate have done better ...
//  consider register blocks inside cache blocks" and on the next line
//  "Going from register blocks inside cache blocks to loops blocked ...
//  raised fitness in only 0 of 2 moves".
static void
s_hints (void)
{
    int parent[3] = { 2, 0, 0 };
    kf_gradient_t g;
    //  The step back (3 -> 2) lost: it agrees, and is said inside the
    //  gradient's hint rather than as a line of its own.
    kf_transition_t a[4] = {
        s_move (1, 2, 0.70, 0.80, false), s_move (1, 2, 0.70, 0.78, false),
        s_move (3, 2, 0.90, 0.85, false), s_move (3, 2, 0.90, 0.86, false),
    };
    kf_gradient_estimate (a, 4, 1.0, &g);
    char *h = kf_gradient_hints (&g, a, 4, 0, parent, 3, 2, true);
    CHECK (kf_test_has (h, "consider register blocks inside cache blocks, with prefetching"));
    CHECK (h && !kf_test_has (h, "- Going from register blocks inside cache blocks to loops blocked"));
    CHECK (kf_test_has (h, "this agrees with the record of the opposite step, from register blocks "
                           "inside cache blocks to loops blocked so each block of data is reused "
                           "while it is in cache, which raised fitness in only 0 of 2 moves"));
    printf ("%s", h ? h : "(none)\n");
    free (h);
    //  The very step advised (2 -> 3) mostly lost: the gradient's hint
    //  is left out, the step's record stays.
    kf_transition_t b[5] = {
        s_move (1, 2, 0.70, 0.80, true), s_move (1, 2, 0.70, 0.80, true),
        s_move (1, 2, 0.70, 0.80, true), s_move (2, 3, 0.80, 0.75, true),
        s_move (2, 3, 0.80, 0.75, true),
    };
    kf_gradient_estimate (b, 5, 1.0, &g);
    CHECK (g.combined[0] > 0.1);
    h = kf_gradient_hints (&g, b, 5, 0, parent, 3, 2, true);
    CHECK (h && !kf_test_has (h, "consider"));
    CHECK (kf_test_has (h, "- Going from loops blocked so each block of data is reused while it is in "
                           "cache to register blocks inside cache blocks (memory access) raised "
                           "fitness in only 0 of 2 moves"));
    printf ("%s", h ? h : "(none)\n");
    free (h);
    //  The step back paid (3 -> 2 in 2 of 2): no advice to go up.
    kf_transition_t c[5] = {
        s_move (1, 2, 0.70, 0.80, true), s_move (1, 2, 0.70, 0.80, true),
        s_move (1, 2, 0.70, 0.80, true), s_move (3, 2, 0.80, 0.85, false),
        s_move (3, 2, 0.80, 0.85, false),
    };
    kf_gradient_estimate (c, 5, 1.0, &g);
    CHECK (g.combined[0] > 0.1);
    h = kf_gradient_hints (&g, c, 5, 0, parent, 3, 2, true);
    CHECK (h && !kf_test_has (h, "consider"));
    CHECK (kf_test_has (h, "- Going from register blocks inside cache blocks to loops blocked so each "
                           "block of data is reused while it is in cache (memory access) raised "
                           "fitness in 2 of 2 moves"));
    printf ("%s", h ? h : "(none)\n");
    free (h);
}

int
main (void)
{
    s_tried_lines ();
    s_tried_in_prompt ();
    s_one_core ();
    s_example_order ();
    s_defaults ();
    s_hints ();
    return kf_test_done ("test_tune_round11");
}
