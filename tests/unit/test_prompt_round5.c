/*  test_prompt_round5.c - what the model of round 5 (issue 15,
 *  docs/search.md "Fifth round") flagged about ideas and the compiler:
 *
 *  - ideas are named by their effect, then their means;
 *  - ideas that depend on each other come as one (a micro-kernel with its
 *    blocking and packing) or in order (the cheap function before threads
 *    and intrinsics);
 *  - a kernel is not handed an idea it already does, and a threaded
 *    kernel that lost is not the parent of an idea about something else
 *    (kf_search_idea_pick: the first elite in the archive's order that
 *    lacks the idea, on the same island when one is named);
 *  - the compile worker's vectoriser summary of the parent reaches the
 *    prompt of its children, bounded and without control characters.
 */
#include "../../compile-worker/kf_compile.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (const char *op, const char *source)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "t", "op", op, "description", "a task", "inputs", "name", "in0",
                      "shape", 4096, "dtype", "f32", "outputs", "name", "out0", "shape", 4096,
                      "dtype", "f32", "reference", "language", "pytorch", "source", source,
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static const char *s_plain =
    "int kf_forward (void) { for (long i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0; return 0; }";
static const char *s_stream =
    "#include <immintrin.h>\nint kf_forward (void) { for (long i = 0; i < n; i += 16)\n"
    "  _mm512_stream_ps (y + i, _mm512_max_ps (_mm512_loadu_ps (x + i), z)); return 0; }";
static const char *s_threads =
    "#include <pthread.h>\nint kf_forward (void) { pthread_create (&t, 0, w, 0);\n"
    "  pthread_join (t, 0); return 0; }";

static void
s_test_names (void)
{
    //  Effect, then means, on every host list; none is a bare means.
    const char *ops[] = { "elementwise", "linear", "softmax", "other_op" };
    const char *srcs[] = { "return torch.clamp(x, 0, 1)", "nn.Linear(4, 4)", "softmax(x)", "x" };
    for (int t = 0; t < 4; t++) {
        json_t *spec = s_spec (ops[t], srcs[t]);
        size_t n = 0;
        const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
        CHECK (n >= 4);
        for (size_t i = 0; i < n; i++) {
            bool ok = strstr (ideas[i], ", by ") && strncmp (ideas[i], "explicit", 8)
                      && strncmp (ideas[i], "non-temporal", 12);
            if (!ok)
                fprintf (stderr, "  idea without effect: %s\n", ideas[i]);
            CHECK (ok);
        }
        json_decref (spec);
    }
    //  The write-allocate read named as what streaming stores save.
    json_t *cheap = s_spec ("elementwise", "return torch.clamp(x, 0, 1)");
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (cheap, KF_TARGET_HOST, &n);
    bool wa = false;
    for (size_t i = 0; i < n; i++)
        wa |= strstr (ideas[i], "skip the output's write-allocate read, by non-temporal") != NULL;
    CHECK (wa);
    json_decref (cheap);
}

static void
s_test_dependencies (void)
{
    //  The micro-kernel comes with the blocking and packing it needs.
    size_t n = 0;
    const char *const *mm = kf_prompt_ideas (KF_CLASS_MATMUL, KF_TARGET_HOST, &n);
    int micro = -1;
    for (size_t i = 0; i < n; i++)
        if (strstr (mm[i], "micro-kernel"))
            micro = (int) i;
    CHECK (micro >= 0 && strstr (mm[micro], "inside cache blocks") && strstr (mm[micro], "packed"));
    //  An expensive function: its cost comes first; intrinsics pay only
    //  once it is cheap, so they either wait for it ("once") or compute the
    //  function in vector registers themselves (round 7: one change,
    //  test_ideas_round6).
    json_t *gelu = s_spec ("gelu", "return F.gelu(x)");
    const char *const *ew = kf_prompt_ideas_for (gelu, KF_TARGET_HOST, &n);
    CHECK (n >= 3 && strstr (ew[0], "approximation"));
    for (size_t i = 1; i < n; i++)
        if (strstr (ew[i], "intrinsics"))
            CHECK (strstr (ew[i], "once ") || strstr (ew[i], "never a libm call per lane"));
    json_decref (gelu);
}

static void
s_test_parent_per_idea (void)
{
    const char *stores = "skip the output's write-allocate read, by non-temporal (streaming) "
                         "stores of whole cache lines";
    const char *threads = "use every core's share of the memory bandwidth, by threads over "
                          "contiguous ranges";
    CHECK (kf_prompt_idea_feature (stores) == KF_IDEA_STREAM);
    CHECK (kf_prompt_idea_feature (threads) == KF_IDEA_THREADS);
    CHECK (kf_prompt_source_does (s_stream, "c", KF_IDEA_STREAM));
    CHECK (!kf_prompt_source_does (s_plain, "c", KF_IDEA_STREAM));
    CHECK (kf_prompt_source_does (s_threads, "c", KF_IDEA_THREADS));
    CHECK (kf_prompt_source_does (s_stream, "c", KF_IDEA_SIMD));
    CHECK (!kf_prompt_source_does (s_plain, "c", KF_IDEA_SIMD));

    kf_elite_t elites[3] = {
        { .candidate_id = 1, .speedup = 8.0 },    /* streams */
        { .candidate_id = 2, .speedup = 5.0 },    /* plain */
        { .candidate_id = 3, .speedup = 3.0 },    /* threaded, lost */
    };
    const char *sources[3] = { s_stream, s_plain, s_threads };
    //  (a) The streaming kernel drawn for the streaming idea: the fastest
    //  kernel that does not stream instead.
    CHECK (kf_search_idea_pick (stores, "c", elites, sources, 3, -1, &elites[0], s_stream) == 1);
    //  The threaded loser drawn for an idea about stores lacks it: kept
    //  (never a choice by measured speed: one archive, one parent).
    CHECK (kf_search_idea_pick (stores, "c", elites, sources, 3, -1, &elites[2], s_threads) == -1);
    //  On an island: only that island's kernels are taken instead.
    elites[1].island = 1;
    elites[2].island = 2;
    const char *two[3] = { s_stream, s_plain, s_plain };
    CHECK (kf_search_idea_pick (stores, "c", elites, two, 3, 2, &elites[0], s_stream) == 2);
    CHECK (kf_search_idea_pick (stores, "c", elites, two, 3, 3, &elites[0], s_stream) == -1);
    elites[1].island = elites[2].island = 0;
    //  A parent that lacks the idea and is the fastest such stays.
    CHECK (kf_search_idea_pick (stores, "c", elites, sources, 3, -1, &elites[1], s_plain) == -1);
    //  For threads, the streaming kernel lacks threads and is fastest: kept.
    CHECK (kf_search_idea_pick (threads, "c", elites, sources, 3, -1, &elites[0], s_stream) == -1);
    //  Every elite does it already: the selection stands.
    const char *all[3] = { s_stream, s_stream, s_stream };
    CHECK (kf_search_idea_pick (stores, "c", elites, all, 3, -1, &elites[0], s_stream) == -1);
    //  An idea no code shows changes nothing.
    CHECK (kf_search_idea_pick ("remove the per-element overhead, by the simplest loop the "
                                "compiler vectorises fully", "c", elites, sources, 3, -1,
                                &elites[2], s_threads) == -1);
}

static void
s_test_compiler_report (void)
{
    json_t *spec = s_spec ("elementwise", "return torch.clamp(x, 0, 1)");
    char log[1024];
    snprintf (log, sizeof log, "kernel.c:3:1: warning: unused variable 'q'\n"
              "%s 1 loop vectorised, 1 not.\n- line 7: vectorised, 64-byte vectors\n"
              "- line 8: not vectorised: statement clobbers memory: ```\x1b[2J _6 = expf (_4);\n",
              KF_COMPILE_VEC_MARK);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:s}", "id", 4, "source", s_plain, "status",
                              "correct", "speedup", 3.0, "log", log);
    json_t *last = json_pack ("{s:i, s:s, s:s, s:f, s:s}", "id", 5, "source", s_stream, "status",
                              "correct", "speedup", 2.0, "log", log);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .last = last, .generation = 1, .slot = 0, .population = 3 };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Compiler report for the parent (GCC's vectoriser, -fopt-info-vec, "
                           "on this build): 1 loop vectorised, 1 not.\n- line 7: vectorised, "
                           "64-byte vectors\n- line 8: not vectorised: statement clobbers memory:"));
    CHECK (p && strstr (p, "Compiler report for it (GCC's vectoriser"));
    CHECK (p && !strchr (p, '\x1b'));
    CHECK (p && !strstr (p, "``` "));
    //  The last kernel's log block holds its warnings, not the report again.
    const char *logblock = p ? strstr (p, "Log:\n") : NULL;
    const char *report_it = p ? strstr (p, "Compiler report for it") : NULL;
    CHECK (logblock && report_it && logblock < report_it
           && !memmem (logblock, (size_t) (report_it - logblock), "1 loop vectorised", 17));
    free (p);
    //  Bounded: a long report is cut on a whole line.
    char big[8192];
    int used = snprintf (big, sizeof big, "%s 0 loops vectorised, 90 not.\n", KF_COMPILE_VEC_MARK);
    for (int l = 0; l < 90 && used < (int) sizeof big - 100; l++)
        used += snprintf (big + used, sizeof big - (size_t) used,
                          "- line %d: not vectorised: control flow in loop\n", l + 10);
    json_object_set_new (base, "log", json_string (big));
    json_decref (in.last);
    in.last = NULL;
    p = kf_prompt_build (&in);
    const char *r = p ? strstr (p, "Compiler report for the parent") : NULL;
    const char *end = r ? strstr (r, "(Line numbers are of its source as shown.)") : NULL;
    CHECK (r && end && end - r < 2000 && end[-1] == '\n' && end[-2] == 'p');
    free (p);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    s_test_names ();
    s_test_dependencies ();
    s_test_parent_per_idea ();
    s_test_compiler_report ();
    return kf_test_done ("test_prompt_round5");
}
