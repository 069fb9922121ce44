/*  test_idea_premise.c - three misfires of the ideas handed to attempts
 *  that the model rounds found (issue 15, "signals that steer";
 *  docs/search.md, the open notes after round 25):
 *
 *  1. an idea whose text takes a feature of the kernel as given went to a
 *     kernel without it, where no feature filter told: the fused
 *     epilogue "at the last k chunk" to a kernel that blocks nothing,
 *     packing "inside the cache blocks" reads the same. Every idea's
 *     premise is read (kf_prompt_idea_premise, the general form of round
 *     20's "once each element's math is vectorised"), the planner moves
 *     such an idea to a kernel that has it, and a clause that only says
 *     what to do in a kernel with a feature is left out for one without;
 *  2. threads were handed as a plain win where the exec worker's start
 *     figures found all cores no faster than one: they wait as a spent
 *     idea does, and are said with the figures when handed;
 *  3. a meta round added "keep the streaming stores but ...", and the
 *     planner handed it to kernels that stream nothing: a meta round's
 *     ideas go through the same premise reading.
 */
#include "../../coordinator/kf_meta_ideas.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include "../kf_test_plan.h"
#include <stdlib.h>
#include <string.h>

#define S_BIT(f) (1u << (f))

static const char *s_mm_src =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
    "    def forward(self, a, b, bias):\n"
    "        z = a @ b + bias\n"
    "        return z * torch.sigmoid(z)\n";

//  A product with bias and SiLU of operands A0 x A1 and B0 x B1, its
//  forward SRC.
static json_t *
s_product_spec (const char *src, int a0, int a1, int b0, int b1)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                      " {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                      " s:{s:f, s:f}}",
                      "name", "mm_bias_silu", "op", "mm_bias_silu", "description",
                      "silu(a @ b + bias)", "inputs", "name", "in0", "shape", a0, a1, "dtype",
                      "f32", "name", "in1", "shape", b0, b1, "dtype", "f32", "name", "in2",
                      "shape", 1024, "dtype", "f32", "outputs", "name", "out0", "shape", 512,
                      1024, "dtype", "f32", "reference", "language", "pytorch", "source",
                      src, "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  A plain product a @ b with bias and SiLU: the [K][N] layout's list.
static json_t *
s_mm_spec (void)
{
    return s_product_spec (s_mm_src, 512, 768, 768, 1024);
}

//  The list of a product whose forward computes EXPR (of a, b, bias).
static const char *const *
s_layout_list (const char *expr, int a0, int a1, int b0, int b1, size_t *n)
{
    char src[256];
    snprintf (src, sizeof src, "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
              "    def forward(self, a, b, bias):\n        z = %s + bias\n"
              "        return z * torch.sigmoid(z)\n", expr);
    json_t *spec = s_product_spec (src, a0, a1, b0, b1);
    const char *const *l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, n);
    json_decref (spec);
    return l;
}

static const char *s_conv_src =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
    "    def __init__(self, channels_in, channels_out):\n        super().__init__()\n"
    "        self.conv = nn.Conv1d(channels_in, channels_out, kernel_size=3, padding=1)\n\n"
    "    def forward(self, x):\n        return torch.relu(self.conv(x))\n";

static json_t *
s_conv_spec (void)
{
    return json_pack ("{s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:[i, i, i], s:s}, {s:s, s:[i, i, i], s:s},"
                      " {s:s, s:[i], s:s}], s:[{s:s, s:[i, i, i], s:s}]}",
                      "name", "conv1d_relu", "description", "relu(conv1d(x, w, b, padding=1))",
                      "reference", "language", "pytorch", "source", s_conv_src,
                      "inputs", "name", "in0", "shape", 8, 64, 2048, "dtype", "f32",
                      "name", "conv_weight", "shape", 128, 64, 3, "dtype", "f32",
                      "name", "conv_bias", "shape", 128, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 8, 128, 2048, "dtype", "f32");
}

static json_t *
s_ew_spec (const char *op, const char *forward)
{
    char src[256];
    snprintf (src, sizeof src, "def forward(self, x):\n    return %s\n", forward);
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", op, "op", op, "description", "a task", "inputs", "name", "in0",
                      "shape", 1 << 22, "dtype", "f32", "outputs", "name", "out0", "shape",
                      1 << 22, "dtype", "f32", "reference", "language", "pytorch", "source", src,
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  The index of the first idea of IDEAS (N) whose text holds PART, or N.
static size_t
s_find (const char *const *ideas, size_t n, const char *part)
{
    for (size_t i = 0; i < n; i++)
        if (strstr (ideas[i], part))
            return i;
    return n;
}

//  Every idea of LIST (N) with a premise, printed; the number with one.
static int
s_premised (const char *name, const char *const *list, size_t n)
{
    int with = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned p = kf_prompt_idea_premise (list[i]);
        if (p) {
            printf ("%s[%zu] premise %#x: %.70s...\n", name, i, p, list[i]);
            with++;
        }
    }
    return with;
}

//  1. What the lists' texts take as given.
static void
s_lists (void)
{
    size_t n;
    const char *const *l;
    //  Every general list: the product's packing "inside the cache
    //  blocks", the GPU product's double-buffered tile loads; the cheap
    //  elementwise, rows and other lists none.
    static const struct { kf_task_class_t c; kf_target_kind_t k; int with; } general[] = {
        { KF_CLASS_ELEMENTWISE, KF_TARGET_HOST, 3 }, { KF_CLASS_ROW_REDUCTION, KF_TARGET_HOST, 0 },
        { KF_CLASS_MATMUL, KF_TARGET_HOST, 1 }, { KF_CLASS_OTHER, KF_TARGET_HOST, 0 },
        { KF_CLASS_ELEMENTWISE, KF_TARGET_CUDA, 0 }, { KF_CLASS_ROW_REDUCTION, KF_TARGET_CUDA, 0 },
        { KF_CLASS_MATMUL, KF_TARGET_CUDA, 1 }, { KF_CLASS_OTHER, KF_TARGET_CUDA, 0 } };
    for (size_t g = 0; g < sizeof general / sizeof general[0]; g++) {
        l = kf_prompt_ideas (general[g].c, general[g].k, &n);
        CHECK (s_premised (kf_prompt_class_name (general[g].c), l, n) == general[g].with);
    }
    l = kf_prompt_ideas (KF_CLASS_MATMUL, KF_TARGET_HOST, &n);
    size_t pack = s_find (l, n, "by packing blocks of the strided operand");
    CHECK (pack < n && kf_prompt_idea_premise (l[pack]) == S_BIT (KF_IDEA_BLOCK));
    //  The micro-kernel "inside cache blocks ... as one change" makes its
    //  own blocks: no premise.
    size_t micro = kf_test_idea_index (l, n, KF_IDEA_MICRO);
    CHECK (micro < n && !kf_prompt_idea_premise (l[micro]));
    l = kf_prompt_ideas (KF_CLASS_MATMUL, KF_TARGET_CUDA, &n);
    size_t dbl = s_find (l, n, "double-buffered");
    CHECK (dbl < n && kf_prompt_idea_premise (l[dbl]) == S_BIT (KF_IDEA_BLOCK));

    //  The costly formula's list: threads, unrolling and streaming stores
    //  "once each element's math is vectorised" (round 20), and the cut in
    //  arithmetic "once they are computed in vector registers" (round 15's
    //  idea, which round 20's reading missed).
    json_t *spec = s_ew_spec ("asinh_gate", "torch.asinh(x) * 2");
    l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_premised ("asinh", l, n) == 4);
    size_t cut = s_find (l, n, "spend fewer instructions");
    CHECK (cut < n && kf_prompt_idea_premise (l[cut]) == KF_PREMISE_VECTORS);
    CHECK (kf_prompt_idea_premise (l[kf_test_idea_index (l, n, KF_IDEA_STREAM)])
           == KF_PREMISE_VECTORS);
    CHECK (!kf_prompt_idea_premise (l[kf_test_idea_index (l, n, KF_IDEA_SIMD)]));
    CHECK (!kf_prompt_idea_premise (l[kf_test_idea_index (l, n, KF_IDEA_PREFETCH)]));
    json_decref (spec);
    spec = s_ew_spec ("scale_shift", "x * 2 + 1");
    l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_premised ("cheap", l, n) == 0);
    json_decref (spec);

    //  The plain product's own list: packing @B for the register tile
    //  inside the cache blocks; the epilogue's "at the last k chunk" is a
    //  clause dropped where it does not hold, not a premise.
    spec = s_mm_spec ();
    l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_premised ("a @ b", l, n) == 1);
    pack = kf_test_idea_index (l, n, KF_IDEA_PACK);
    CHECK (pack < n && kf_prompt_idea_premise (l[pack])
                           == (S_BIT (KF_IDEA_BLOCK) | S_BIT (KF_IDEA_MICRO)));
    size_t epi = kf_test_idea_index (l, n, KF_IDEA_EPILOGUE);
    CHECK (epi < n && kf_test_has (l[epi], "at the last k chunk"));
    CHECK (epi < n && !kf_prompt_idea_premise (l[epi]));
    json_decref (spec);

    //  The other layouts' lists: packing inside the cache blocks, where
    //  they have a packing idea (a @ b.T reads both along k: none).
    l = s_layout_list ("a.T @ b", 768, 512, 768, 1024, &n);
    CHECK (s_premised ("a.T @ b", l, n) == 1);
    CHECK (kf_prompt_idea_premise (l[kf_test_idea_index (l, n, KF_IDEA_PACK)])
           == S_BIT (KF_IDEA_BLOCK));
    l = s_layout_list ("a.T @ b.T", 768, 512, 1024, 768, &n);
    CHECK (s_premised ("a.T @ b.T", l, n) == 1);
    CHECK (kf_prompt_idea_premise (l[kf_test_idea_index (l, n, KF_IDEA_PACK)])
           == S_BIT (KF_IDEA_BLOCK));
    l = s_layout_list ("a @ b.T", 512, 768, 1024, 768, &n);
    CHECK (s_premised ("a @ b.T", l, n) == 0);
    CHECK (n > 4 && kf_test_idea_index (l, n, KF_IDEA_OUTER) < n);

    //  The convolution's: cache blocking "around the register tile"; its
    //  epilogue no longer into "the store of each register tile".
    spec = s_conv_spec ();
    l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_premised ("conv", l, n) == 1);
    size_t block = kf_test_idea_index (l, n, KF_IDEA_BLOCK);
    CHECK (block < n && kf_prompt_idea_premise (l[block]) == S_BIT (KF_IDEA_MICRO));
    epi = kf_test_idea_index (l, n, KF_IDEA_EPILOGUE);
    CHECK (epi < n && !kf_prompt_idea_premise (l[epi]));
    json_decref (spec);

    //  Texts as a meta round writes them.
    CHECK (kf_prompt_idea_premise ("keep the streaming stores but cut the exp's cost, by a "
                                   "polynomial of lower degree") == S_BIT (KF_IDEA_STREAM));
    CHECK (kf_prompt_idea_premise ("split the rows across its threads by a dynamic schedule")
           == S_BIT (KF_IDEA_THREADS));
    CHECK (kf_prompt_idea_premise ("fuse the bias into the register tile's store")
           == S_BIT (KF_IDEA_MICRO));
    //  "but" ends what "keep" takes as given: the threads are added.
    CHECK (kf_prompt_idea_premise ("keep streaming stores but add threads over rows")
           == S_BIT (KF_IDEA_STREAM));
    CHECK (!kf_prompt_idea_premise ("use every core, by threads over contiguous ranges"));
    CHECK (!kf_prompt_idea_premise (NULL));
}

//  1 and 3. The plan: an idea whose premise the selected kernel lacks
//  moves to a kernel of the pool that has it and lacks the idea, or the
//  slot takes another idea.
static void
s_plan (void)
{
    json_t *spec = s_mm_spec ();
    size_t n;
    const char *const *l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t pack = kf_test_idea_index (l, n, KF_IDEA_PACK);
    //  Candidate 1: a register tile, no cache blocks; candidate 2: a
    //  register tile in cache blocks, nothing packed.
    kf_elite_t elites[2] = { { .candidate_id = 1, .speedup = 5.0 },
                             { .candidate_id = 2, .speedup = 4.0 } };
    unsigned features[2] = { S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_MICRO),
                             S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_MICRO) | S_BIT (KF_IDEA_BLOCK) };
    int pick = -1;
    size_t idx = kf_test_plan (l, n, pack, elites, features, 2, KF_TEST_PLAN_SCALAR, NULL, &pick);
    printf ("packing: '%.40s...' from elite %d\n", l[idx], pick);
    CHECK (idx == pack && pick == 1);
    //  No kernel of the pool blocks: another idea, whose premise the
    //  selected kernel has.
    unsigned unblocked[2] = { features[0], features[0] };
    idx = kf_test_plan (l, n, pack, elites, unblocked, 2, KF_TEST_PLAN_SCALAR, NULL, &pick);
    CHECK (idx != pack);
    CHECK (!(kf_prompt_idea_premise (l[idx]) & ~unblocked[pick >= 0 ? pick : 0]));
    json_decref (spec);

    //  3. A meta round adds "keep the streaming stores but ..." to the
    //  costly formula's list; the threaded kernel selected streams
    //  nothing, the other does.
    spec = s_ew_spec ("asinh_gate", "torch.asinh(x) * 2");
    json_t *sections = json_object ();
    json_t *list = kf_meta_idea_list (sections, spec, KF_TARGET_HOST);
    json_t *edits = kf_meta_parse_idea_edits ("ADD IDEA: keep the streaming stores but cut each "
                                              "element's arithmetic, by a polynomial of lower "
                                              "degree within the tolerance\n");
    json_t *log = json_array ();
    int accepted = 0;
    json_t *edited = kf_meta_apply_idea_edits (list, edits, 4, log, &accepted);
    CHECK (accepted == 1);
    json_object_set_new (sections, KF_META_IDEAS_KEY, edited);
    size_t count = 0;
    const char **ideas = kf_meta_ideas (sections, spec, KF_TARGET_HOST, &count);
    size_t added = ideas ? s_find (ideas, count, "keep the streaming stores") : 0;
    CHECK (ideas && added < count);
    if (ideas && added < count) {
        kf_elite_t ew[2] = { { .candidate_id = 7, .speedup = 30.0 },
                             { .candidate_id = 8, .speedup = 25.0 } };
        unsigned f[2] = { S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_THREADS),
                          S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_STREAM) };
        bool scalar[2] = { false, false };
        idx = kf_test_plan (ideas, count, added, ew, f, 2, KF_TEST_PLAN_SCALAR, scalar, &pick);
        printf ("meta idea: '%.40s...' from elite %d\n", ideas[idx], pick);
        CHECK (idx == added && pick == 1);
        unsigned none[2] = { f[0], f[0] };
        idx = kf_test_plan (ideas, count, added, ew, none, 2, KF_TEST_PLAN_SCALAR, scalar,
                            &pick);
        CHECK (idx != added);
    }
    free (ideas);
    json_decref (edits);
    json_decref (log);
    json_decref (list);
    json_decref (sections);
    json_decref (spec);
}

//  The prompt's words for an attempt the plan moved for its premise.
static void
s_moved_words (void)
{
    json_t *spec = s_mm_spec ();
    size_t n;
    const char *const *l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 2, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 4.0);
    json_t *plan = json_pack ("{s:s, s:{}, s:[], s:{s:I, s:s, s:I}}", "mine",
                              l[kf_test_idea_index (l, n, KF_IDEA_PACK)], "notes", "aside",
                              "moved", "from", (json_int_t) 1, "why", "premise", "lacks",
                              (json_int_t) S_BIT (KF_IDEA_BLOCK));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 1, .slot = 0, .population = 3,
                          .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "The archive offered candidate 1 for this attempt; this attempt's "
                           "idea takes cache blocking as given (its words build on it), and "
                           "that kernel's code does not have it, so the attempt starts from "
                           "this kernel instead."));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (spec);
}

//  A product's C source: one that blocks k when BLOCKED, else the plain
//  triple loop.
static const char *s_plain_c =
    "#include <stddef.h>\n"
    "void kf_forward (const float *a, const float *b, float *out, int M, int N, int K)\n{\n"
    "    for (int i = 0; i < M; i++)\n"
    "        for (int j = 0; j < N; j++) {\n"
    "            float s = 0;\n"
    "            for (int k = 0; k < K; k++)\n"
    "                s += a[i * K + k] * b[k * N + j];\n"
    "            out[i * N + j] = s;\n"
    "        }\n}\n";
static const char *s_blocked_c =
    "#include <stddef.h>\n"
    "#define KB 128\n"
    "void kf_forward (const float *a, const float *b, float *out, int M, int N, int K)\n{\n"
    "    for (int kk = 0; kk < K; kk += KB)\n"
    "        for (int i = 0; i < M; i++)\n"
    "            for (int k = kk; k < kk + KB && k < K; k++)\n"
    "                for (int j = 0; j < N; j++)\n"
    "                    out[i * N + j] += a[i * K + k] * b[k * N + j];\n}\n";

//  The attempt's text of the epilogue idea from BASE_SRC (NULL: none).
static char *
s_epilogue_prompt (json_t *spec, const char *idea, const char *base_src)
{
    json_t *base = base_src ? json_pack ("{s:i, s:s, s:s, s:f}", "id", 2, "source", base_src,
                                         "status", "correct", "speedup", 4.0)
                            : NULL;
    json_t *plan = json_pack ("{s:s, s:{}, s:[]}", "mine", idea, "notes", "aside");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = base ? 1 : 0, .slot = 0,
                          .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    json_decref (plan);
    json_decref (base);
    return p;
}

//  1. The fused epilogue's clause for a kernel that blocks k.
static void
s_reworded (void)
{
    json_t *spec = s_mm_spec ();
    size_t n;
    const char *const *l = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *epi = l[kf_test_idea_index (l, n, KF_IDEA_EPILOGUE)];
    char *bare = kf_prompt_idea_for_parent (epi, 0);
    char *kept = kf_prompt_idea_for_parent (epi, S_BIT (KF_IDEA_BLOCK));
    CHECK (bare && !strstr (bare, "k chunk") && !strcmp (kept, epi));
    CHECK (bare && !strncmp (bare, epi, strlen (bare)) && strlen (bare) < strlen (epi));
    free (bare);
    free (kept);
    CHECK (!kf_prompt_idea_for_parent (NULL, 0));
    //  The kernels' features as the planner reads them.
    CHECK (!(kf_prompt_source_features (s_plain_c, "c") & S_BIT (KF_IDEA_BLOCK)));
    CHECK (kf_prompt_source_features (s_blocked_c, "c") & S_BIT (KF_IDEA_BLOCK));
    char *p = s_epilogue_prompt (spec, epi, s_plain_c);
    CHECK (kf_test_has (p, "This attempt's idea: write the output once"));
    CHECK (p && !strstr (p, "at the last k chunk"));
    free (p);
    p = s_epilogue_prompt (spec, epi, s_blocked_c);
    CHECK (kf_test_has (p, "at the last k chunk's store"));
    free (p);
    //  Generation 0 writes its kernel from scratch: the clause stays.
    p = s_epilogue_prompt (spec, epi, NULL);
    CHECK (kf_test_has (p, "at the last k chunk's store"));
    free (p);
    json_decref (spec);
}

//  A host of 2 CPUs with the FMA peak and the streaming copy measured at
//  start as given.
static json_t *
s_hardware (double fma_one, double fma_all, double copy_one, double copy_all)
{
    return json_pack ("{s:s, s:[{s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:s}]}", "backend", "host",
                      "devices", "name", "vm", "cores", 2, "thread_start_join_us", 40.0,
                      "peak_gflops_one_core", fma_one, "peak_gflops_all_threads", fma_all,
                      "copy_stream_one_core_gbs", copy_one, "copy_stream_all_cores_gbs",
                      copy_all, "isa", "sse4.2 avx avx2 fma");
}

//  2. Threads where the host's start figures found no gain from all cores.
static void
s_cores (void)
{
    json_t *mm = s_mm_spec (), *cheap = s_ew_spec ("scale_shift", "x * 2 + 1");
    json_t *fma_flat = s_hardware (65, 61, 20, 38);     //  FMA 0.94x, copy 1.9x
    json_t *copy_flat = s_hardware (65, 124, 20, 21);   //  FMA 1.9x, copy 1.05x
    json_t *both = s_hardware (65, 124, 20, 38);
    kf_prompt_cores_gain_t g;
    CHECK (kf_prompt_cores_no_gain (fma_flat, mm, &g) && !strcmp (g.unit, "GFLOP/s"));
    CHECK (!kf_prompt_cores_no_gain (fma_flat, cheap, NULL));
    CHECK (kf_prompt_cores_no_gain (copy_flat, cheap, &g) && !strcmp (g.unit, "GB/s"));
    CHECK (!kf_prompt_cores_no_gain (copy_flat, mm, NULL));
    CHECK (!kf_prompt_cores_no_gain (both, mm, NULL) && !kf_prompt_cores_no_gain (both, cheap,
                                                                                  NULL));
    //  Within 15%: no gain; 20%: a gain.
    json_t *near = s_hardware (65, 74, 20, 22.5);
    json_t *some = s_hardware (65, 78, 20, 24);
    CHECK (kf_prompt_cores_no_gain (near, mm, NULL) && kf_prompt_cores_no_gain (near, cheap, NULL));
    CHECK (!kf_prompt_cores_no_gain (some, mm, NULL) && !kf_prompt_cores_no_gain (some, cheap,
                                                                                  NULL));
    //  The plan: threads wait as a spent idea does, so the slot at them
    //  takes another idea.
    size_t n;
    const char *const *l = kf_prompt_ideas_for (mm, KF_TARGET_HOST, &n);
    size_t threads = kf_test_idea_index (l, n, KF_IDEA_THREADS);
    bool spent[16] = { false };
    CHECK (kf_search_idea_idle_cores (l, n, mm, fma_flat, spent) == 1 && spent[threads]);
    bool none[16] = { false };
    CHECK (kf_search_idea_idle_cores (l, n, mm, both, none) == 0 && !none[threads]);
    {
        kf_elite_t e[1] = { { .candidate_id = 1, .speedup = 5.0 } };
        unsigned f[1] = { S_BIT (KF_IDEA_SIMD) };
        size_t order[16];
        bool aside[16] = { false };
        for (size_t k = 0; k < n; k++)
            order[k] = (threads + k) % n;
        kf_search_idea_known_t known = { .chosen_built = -1, .spent = spent };
        int pick = -1;
        size_t idx = kf_search_idea_fit_known (l, n, order, aside, 3, 0, e, f, 1, -1, &e[0],
                                               f[0], &known, &pick);
        CHECK (idx != threads);
        known.spent = none;
        idx = kf_search_idea_fit_known (l, n, order, aside, 3, 0, e, f, 1, -1, &e[0], f[0],
                                        &known, &pick);
        CHECK (idx == threads);
    }
    //  When handed, the figures are said.
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 2, "source", s_plain_c,
                              "status", "correct", "speedup", 4.0, "candidate_ns", 9e6);
    json_t *plan = json_pack ("{s:s, s:{}, s:[]}", "mine", l[threads], "notes", "aside");
    kf_prompt_in_t in = { .spec = mm, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 1, .slot = 0, .population = 3,
                          .ideas = plan, .hardware = fma_flat };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "Measured by the exec worker at start, this host's f32 FMA peak was "
                           "61.0 GFLOP/s with a thread on each of its 2 logical CPUs against "
                           "65.0 on one core alone (0.94x, under the 15% gain"));
    CHECK (kf_test_has (p, "this idea is no sure win here"));
    free (p);
    in.hardware = both;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "What threads cost here") && !kf_test_has (p, "no sure win"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (near);
    json_decref (some);
    json_decref (fma_flat);
    json_decref (copy_flat);
    json_decref (both);
    json_decref (mm);
    json_decref (cheap);
}

int
main (void)
{
    s_lists ();
    s_plan ();
    s_moved_words ();
    s_reworded ();
    s_cores ();
    return kf_test_done ("test_idea_premise");
}
