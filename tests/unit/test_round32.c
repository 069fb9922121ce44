/*  test_round32.c - what round 32 of the model in the loop (issue 15,
 *  docs/search.md "Thirty-second round") found in the prompts of
 *  softmax(a @ w.t(), dim=0), each column of a [512][1024] product turned
 *  into a distribution over its 512 rows
 *  (tests/fixtures/pytorch/mm_bt_colsoftmax.py):
 *
 *  1. the softmax was read as one over each row: the correctness section
 *     said "e^(x - max) / sum over its row", the Epilogue line "a maximum
 *     and a sum pass over its row ... a row of 1024 outputs is 4096 bytes
 *     and stays in L1", the threads text "by row blocks each thread
 *     finishes whole rows", and the pitfalls "Subtract the row maximum":
 *     a softmax over dim 0 is now read as a column's (kf_formula_t's COL),
 *     its maximum and sum of exponentials the statistic, each element's
 *     exp and scale the per-column step;
 *  2. a two-thread kernel whose process used 0.95 CPU-seconds a second of
 *     its calls read "each of its 2 threads taking 1/2 of the vectors",
 *     half the cycles a vector it spent, and the plan, reading its row
 *     without the timing's load, handed it streaming stores that its own
 *     prompt said its arithmetic would leave unpaid (its threads' CPU
 *     time now counts in both; test_round25 has the one-core wording);
 *  3. the identity idea's examples were Mish's and softplus's, where
 *     tanh(x) = 2 sigmoid(2x) - 1 was the one the task's formula had;
 *  4. "MC = 1484" and "NC = 23808" were given for M = 512 and N = 1024,
 *     with "round them to the task's shapes" left to the reader;
 *  5. (round 33) a meta edit citing candidate 2's 1.93 ms, a would-be
 *     new best whose standing still read "counted", went in unmarked;
 *     timed again, it counted at 4.04 ms.
 */
#include "../../common/kf_json.h"
#include "../../common/kf_str.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_blocking.h"
#include "../../coordinator/kf_meta_code.h"
#include "../../coordinator/kf_meta_edits.h"
#include "../../coordinator/kf_meta_outcomes.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The round's fixture with forward's return line RET.
static json_t *
s_spec (const char *ret)
{
    char *src = kf_strdupf ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                            "    def __init__(self):\n        super().__init__()\n\n"
                            "    def forward(self, a, w):\n        return %s\n\n\n"
                            "def get_inputs():\n    return [torch.randn(512, 256), "
                            "torch.randn(1024, 256) / 256 ** 0.5]\n", ret);
    json_t *spec = json_pack ("{s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                              " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm_bt_colsoftmax", "op", "mm_bt_colsoftmax", "inputs",
                              "name", "a", "shape", 512, 256, "dtype", "f32", "name", "w",
                              "shape", 1024, 256, "dtype", "f32", "outputs", "name", "out0",
                              "shape", 512, 1024, "dtype", "f32", "reference", "language",
                              "pytorch", "source", src, "tolerance", "rtol", 1e-2, "atol", 1e-5);
    free (src);
    return spec;
}

static void
test_read (void)
{
    static const char *const cols[] = { "torch.softmax(a @ w.t(), dim=0)",
                                        "torch.softmax(a @ w.t(), 0)",
                                        "F.softmax(a @ w.t(), dim=-2)",
                                        "(a @ w.t()).softmax(dim=0)" };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        json_t *spec = s_spec (cols[i]);
        kf_formula_t fm;
        bool read = kf_prompt_formula (spec, &fm);
        printf ("%s: row '%s', col '%s'\n", cols[i], read ? fm.row : "?", read ? fm.col : "?");
        CHECK (read && !strcmp (fm.col, "softmax") && !*fm.row && fm.col_outer);
        json_decref (spec);
    }
    //  Over the last dimension it is a row's, as before.
    json_t *spec = s_spec ("torch.softmax(a @ w.t(), dim=1)");
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.row, "softmax") && !*fm.col);
    json_decref (spec);
    spec = s_spec ("torch.log_softmax(a @ w.t(), dim=0)");
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.col, "log_softmax") && !*fm.row);
    json_decref (spec);
}

static void
test_texts (void)
{
    json_t *spec = s_spec ("torch.softmax(a @ w.t(), dim=0)");
    json_t *d = json_pack ("{s:f, s:f, s:f}", "peak_gflops_one_core", 118.0, "l1d_bytes",
                           32768.0, "l2_bytes", 1048576.0);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_line (f, spec, d));
    printf ("epilogue line: %s", text);
    CHECK (kf_test_has (text, "it is no elementwise work but a softmax over each column (dim 0: "
                              "each of the 1024 columns over all 512 rows): a maximum and a "
                              "sum-of-exponentials pass over the column, then each element's exp "
                              "scaled by the column's reciprocal sum"));
    CHECK (kf_test_has (text, "4 operations and 1 call an element in all"));
    CHECK (kf_test_has (text, "a strip of 16 columns over all 512 rows is 32 KiB (its rows 4096 "
                              "bytes apart)"));
    CHECK (!kf_test_has (text, "over its row") && !kf_test_has (text, "stays in L1 between"));
    //  Round 33: rows 4096 bytes apart alias in the caches' sets; "half of
    //  L2 at most, so it can stay in L2" was not so.
    CHECK (kf_test_has (text, "bytes apart), a multiple of 4 KiB: the strip's line in each row "
                              "falls in the same few sets of every cache level"));
    CHECK (!kf_test_has (text, "so it can stay in L2"));
    free (text);
    char *idea = kf_prompt_epilogue_idea (spec);
    printf ("idea: %s\n", idea ? idea : "(none)");
    CHECK (kf_test_has (idea, "fold each tile into its columns' running maxima and sums of "
                              "exponentials"));
    CHECK (kf_test_has (idea, "(online: rescale a column's running sum by e^(old max - new max) "
                              "when its maximum grows)"));
    CHECK (kf_test_has (idea, "the exp and scale cannot be applied tile by tile"));
    free (idea);
    char *threads = kf_prompt_epilogue_threads_idea (spec, "a", "w");
    printf ("threads: %s\n", threads ? threads : "(none)");
    CHECK (kf_test_has (threads, "by column blocks of the output split across threads, each "
                                 "thread owning whole columns over all 512 rows"));
    free (threads);
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_split (f, spec));
    CHECK (kf_test_has (text, "by column blocks each thread finishes whole columns by itself"));
    free (text);
    KF_TEST_CAPTURE (text, f, kf_prompt_tolerance_section (f, spec, NULL));
    CHECK (kf_test_has (text, "So: the output is a softmax, e^(x - max) / sum over its column."));
    CHECK (!kf_test_has (text, "over its row"));
    free (text);
    json_t *sections = kf_prompt_default_sections_for ("c", "host", spec);
    const char *pitfalls = kf_jstr (sections, "pitfalls");
    CHECK (kf_test_has (pitfalls, "each column's where the softmax is over dim 0"));
    CHECK (!kf_test_has (pitfalls, "Subtract the row maximum"));
    json_decref (sections);
    json_decref (d);
    json_decref (spec);
}

//  2. The round's elementwise task and host (AVX-512, 2 cores).
static void
test_cpu_time (void)
{
    json_t *spec = json_pack ("{s:[{s:s, s:[i, i], s:s}], s:[{s:s, s:[i, i], s:s}],"
                              " s:{s:s, s:s}}", "inputs", "name", "x", "shape", 2048, 8192,
                              "dtype", "f32", "outputs", "name", "out0", "shape", 2048, 8192,
                              "dtype", "f32", "reference", "language", "pytorch", "source",
                              "    def forward(self, x):\n        return torch.sigmoid(2.0 * x) "
                              "* torch.tanh(x) + 0.25 * torch.cos(x)\n");
    json_t *hw = json_pack ("{s:s, s:s, s:[{s:i, s:f, s:f, s:f, s:f, s:f, s:f}]}", "backend",
                            "host", "compile_isa", "sse4.2 avx2 avx512f", "devices", "cores", 2,
                            "clock_mhz_measured", 3000.0, "read_cold_one_core_gbs", 24.2,
                            "read_cold_all_cores_gbs", 12.0, "write_stream_one_core_gbs", 25.0,
                            "write_stream_all_cores_gbs", 25.1, "thread_start_join_us", 19.1);
    //  Round 50: all cores' reads and writes overlap (kf_prompt_cold_ms):
    //  the all-cores read rate is set lower, so that two CPUs' budget is
    //  still more than twice one core's, as the case needs.
    json_t *k = json_pack ("{s:s, s:f}", "source", KF_TEST_TWO_THREADS, "candidate_ns",
                           14.08e6);
    kf_per_vector_t pv;
    double cycles, budget;
    CHECK (kf_prompt_per_vector (k, spec, hw, 1, &pv) && pv.threads == 2 && pv.cpus == 2);
    double two = pv.cycles;
    bool arith_two = kf_search_idea_arith_bound (k, spec, hw, KF_TARGET_HOST, &cycles, &budget);
    printf ("2 CPUs: %.1f cycles, budget %.1f, arith %d\n", cycles, budget, arith_two);
    json_object_set_new (k, "one_core", json_pack ("{s:f}", "cpu_per_wall", 0.95));
    CHECK (kf_prompt_per_vector (k, spec, hw, 1, &pv) && pv.cpus == 1 && pv.used == 0.95);
    CHECK (pv.cycles > 0.45 * two && pv.cycles < 0.55 * two);
    bool arith_one = kf_search_idea_arith_bound (k, spec, hw, KF_TARGET_HOST, &cycles, &budget);
    printf ("its 0.95 CPU: %.1f cycles, budget %.1f, arith %d\n", cycles, budget, arith_one);
    CHECK (!arith_two && arith_one);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_per_vector_text (f, k, spec, hw, KF_STORES_ORDINARY, ""));
    printf ("%s\n", text);
    CHECK (kf_test_has (text, "over the about 1.0 CPUs' time its 2 threads had (the count its "
                              "code defines; its process used 0.95 CPU-seconds a second of its "
                              "calls in that timing)"));
    free (text);
    json_decref (k);
    json_decref (hw);
    json_decref (spec);
}

//  3.
static void
test_identity (void)
{
    const char *idea = kf_test_identity_idea ("torch.sigmoid(2.0 * x) * torch.tanh(x) + 0.25 * "
                                   "torch.cos(x)");
    printf ("identity: %s\n", idea ? idea : "(none)");
    CHECK (kf_test_has (idea, "for this task's sigmoid, tanh, cos: tanh(x) = 2 sigmoid(2x) - 1, "
                              "so sigmoid(2x) and tanh(x) come from one e^-2x"));
    CHECK (idea && !strstr (idea, "softplus") && !strstr (idea, "sin and cos"));
    //  Round 34: softplus and tanh of one x share e^x; Mish's
    //  composition is the other case.
    idea = kf_test_identity_idea ("F.softplus(x) - 0.5 * torch.tanh(x)");
    CHECK (kf_test_has (idea, "tanh(x) and softplus(x) of one x from one u = e^x"));
    idea = kf_test_identity_idea ("torch.sin(x) * torch.cos(x) + torch.exp(-x * x)");
    CHECK (kf_test_has (idea, "sin and cos of one argument from one range reduction"));
    //  No pair the table knows: the general kinds with their examples.
    idea = kf_test_identity_idea ("torch.exp(-x * x) + torch.log1p(x * x)");
    CHECK (idea == NULL || kf_test_has (idea, "(sigmoid and softplus from one e^-|x|)"));
}

//  4.
static void
test_blocks (void)
{
    json_t *spec = s_spec ("torch.softmax(a @ w.t(), dim=0)");
    json_t *d = json_pack ("{s:i, s:f, s:f, s:f, s:i, s:s}", "cores", 2, "l1d_bytes", 32768.0,
                           "l2_bytes", 1048576.0, "l3_bytes", 33554432.0, "l3_shared_cpus", 2,
                           "isa", "sse4.2 avx2 avx512f");
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_blocking_line (f, spec, d, "sse4.2 avx2 avx512f"));
    printf ("%s", text);
    CHECK (kf_test_has (text, "For this task's M = 512, N = 1024, K = 256: a whole K x NR "
                              "panel of B"));
    CHECK (kf_test_has (text, "between blocks, its epilogue after the last: KC = 88 takes K in "
                              "3 blocks, and KC = 64 makes 4 even ones)"));
    CHECK (kf_test_has (text, "is the simpler start (blocking k instead"));
    CHECK (kf_test_has (text, "4 even ones); MR = 14 leaves M a last "
                              "tile of 8 rows (512 = 36 x 14 + 8), while 8 x 32 (MR = 8, NR = 2 "
                              "vectors: 16 accumulators) divides both M and N."));
    //  Round 43: MC and NC past M and N are said as the whole of them, in
    //  their place, not as "MC = 1484" taken back at the line's end.
    CHECK (kf_test_has (text, "all 512 rows of A make one MC block (an M x KC block of A, "
                              "176.0 KiB, within half of the 1.0 MiB L2); all 1024 columns of B "
                              "make one NC panel (a KC x N panel of B, 352.0 KiB"));
    CHECK (!kf_test_has (text, "MC = 1484") && !kf_test_has (text, "is past"));
    CHECK (!kf_test_has (text, "round them to the task's shapes"));
    //  Round 34: K = 384 read "KC = 80 makes them even" (5 x 80 is 400).
    json_t *k384 = json_pack ("{s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                              " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}}", "inputs", "name", "a",
                              "shape", 512, 384, "dtype", "f32", "name", "w", "shape", 384, 768,
                              "dtype", "f32", "outputs", "name", "out0", "shape", 512, 768,
                              "dtype", "f32", "reference", "language", "pytorch", "source",
                              "    def forward(self, a, w):\n"
                              "        return torch.relu(a @ w) ** 2\n");
    char *t384;
    KF_TEST_CAPTURE (t384, f, kf_prompt_blocking_line (f, k384, d, "sse4.2 avx2 avx512f"));
    CHECK (kf_test_has (t384, "KC = 88 takes K in 5 blocks, and KC = 64 makes 6 even ones"));
    free (t384);
    json_decref (k384);
    //  Round 33: w is stored [N][K] and read along k: no "B's rows are
    //  4096 bytes apart", which is of a [K][N] B.
    CHECK (!kf_test_has (text, "4096 bytes apart"));
    free (text);
    json_decref (d);
    json_decref (spec);
}

//  5.
static void
test_awaiting (void)
{
    json_t *outcomes = json_pack ("[{s:i, s:s, s:s, s:f}, {s:i, s:s, s:s, s:f},"
                                  " {s:i, s:s, s:s, s:f}]",
                                  "candidate_id", 1, "standing", "counted", "fidelity", "full",
                                  "speedup", 36.07, "candidate_id", 2, "standing", "counted",
                                  "fidelity", "full", "speedup", 55.24, "candidate_id", 3,
                                  "standing", "screen figure", "fidelity", "screen", "speedup",
                                  60.0);
    CHECK (!kf_meta_unconfirmed (outcomes, 2));
    kf_meta_outcomes_awaiting (outcomes, 1, 36.07);
    CHECK (kf_meta_unconfirmed (outcomes, 2) && !kf_meta_unconfirmed (outcomes, 1));
    CHECK (!strcmp (kf_jstr (json_array_get (outcomes, 2), "standing"), "screen figure"));
    //  The edit that cited it is marked, as one citing any unconfirmed figure.
    kf_meta_rules_t rules = { .outcomes = outcomes };
    json_t *sections = json_pack ("{s:s}", "strategies", "- Split the output across threads.\n");
    json_t *edits = json_pack ("[{s:s, s:s, s:s}]", "section", "strategies", "search",
                               "- Split the output across threads.",
                               "replace", "- Split the output by column blocks. Candidate 2 "
                               "(1.93 ms, full protocol, 2 threads) against candidate 1 (2.96 ms) "
                               "shows the split pays here.");
    json_t *log = NULL;
    json_t *out = kf_meta_apply_edits_ruled (sections, edits, 3, NULL, &rules, &log);
    printf ("awaiting: %s\n", kf_jstr (out, "strategies"));
    CHECK (kf_test_has (kf_jstr (out, "strategies"), "(candidate 2's figure awaited "
                                                     "confirmation when written"));
    json_decref (out);
    json_decref (log);
    json_decref (edits);
    json_decref (sections);
    json_decref (outcomes);
}

int
main (void)
{
    test_read ();
    test_texts ();
    test_cpu_time ();
    test_identity ();
    test_blocks ();
    test_awaiting ();
    return kf_test_done ("test_round32");
}
