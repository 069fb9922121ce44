/*  test_epilogue_colred.c - what round 24 of the model in the loop
 *  (issue 15) found in the prompts of tests/fixtures/pytorch/mm_colrms.py,
 *  p = a @ b; p * rsqrt((p * p).mean(dim=0, keepdim=True) + 1e-5): an
 *  epilogue that reduces over the ROWS of each column, then scales it.
 *
 *  1. the Epilogue line read "5 operations and 0 libm calls", the rsqrt
 *     one of five elementwise operations: it says the epilogue is a
 *     reduction over each column's rows, then a per-column scale;
 *  2. the fused-epilogue idea said "apply it to each tile of outputs while
 *     it is in registers", which cannot be done here: it says the column
 *     statistic is folded at each tile's final store and the scale is a
 *     second pass over a column strip while it is in cache;
 *  3. the threads idea offered column and row blocks as equals; row
 *     blocks need a cross-thread sum and a barrier before the scale: it
 *     says to split by column blocks, each thread owning whole columns.
 *
 *  An elementwise epilogue (mm_leaky_rowscale.py) keeps its texts, which
 *  are the keys its ideas' tries are matched by.
 */
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../kf_test.h"
#include "kf_file.h"
#include "kf_str.h"
#include <stdlib.h>
#include <string.h>

//  FIXTURE (tests/fixtures/pytorch) as kfctl submits it (op "pytorch"),
//  with the line that starts with FROM replaced by TO where both are
//  given; inputs of SHAPES (rows, inner, cols), a third of ROWS entries
//  where THIRD.
static json_t *
s_task (const char *fixture, const char *from, const char *to, const int shapes[3], bool third)
{
    char *path = kf_strdupf ("tests/fixtures/pytorch/%s", fixture);
    size_t n = 0;
    char *src = kf_file_read (path, 1 << 20, &n);
    free (path);
    CHECK (src != NULL);
    if (!src)
        src = strdup ("");
    char *at = from ? strstr (src, from) : NULL;
    char *eol = at ? strchr (at, '\n') : NULL;
    CHECK (!from || eol);
    if (eol) {
        char *next = kf_strdupf ("%.*s%s%s", (int) (at - src), src, to, eol);
        free (src);
        src = next;
    }
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                              " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", fixture, "op", "pytorch", "description", fixture,
                              "inputs", "name", "in0", "shape", shapes[0], shapes[1], "dtype",
                              "f32", "name", "in1", "shape", shapes[1], shapes[2], "dtype", "f32",
                              "outputs", "name", "out0", "shape", shapes[0], shapes[2], "dtype",
                              "f32", "reference", "language", "pytorch", "source", src,
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    if (third)
        json_array_append_new (json_object_get (spec, "inputs"),
                               json_pack ("{s:s, s:[i], s:s}", "name", "in2", "shape", shapes[0],
                                          "dtype", "f32"));
    free (src);
    return spec;
}

static const int s_colrms[3] = { 512, 768, 640 };
static const int s_leaky[3] = { 384, 1024, 512 };

//  The round's host: two cores, 98 GFLOP/s on one, 32 KiB L1d, 512 KiB L2.
static json_t *
s_device (void)
{
    return json_pack ("{s:s, s:f, s:f, s:i, s:i, s:i, s:i, s:f}", "name", "host", "peak_gflops",
                      190.0, "peak_gflops_one_core", 98.0, "cores", 2, "physical_cores", 2,
                      "l1d_bytes", 32768, "l2_bytes", 524288, "clock_mhz", 3243.0);
}

static char *
s_text (void (*write) (FILE *, json_t *, json_t *), json_t *spec, json_t *d)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    write (f, spec, d);
    fclose (f);
    return text;
}

//  The idea of FEATURE in SPEC's host list (borrowed), or NULL.
static const char *
s_idea (json_t *spec, kf_idea_feature_t feature)
{
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    for (size_t i = 0; ideas && i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == feature)
            return ideas[i];
    return NULL;
}

static void
test_colrms (void)
{
    json_t *spec = s_task ("mm_colrms.py", NULL, NULL, s_colrms, false), *d = s_device ();
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm));
    CHECK (!*fm.row && !strcmp (fm.col, "mean") && fm.col_dim == 0 && fm.col_squares
           && !fm.col_outer && (fm.col_after & (1u << KF_OP_SQRT)));
    kf_epilogue_t e;
    CHECK (kf_prompt_epilogue (spec, &e) && !strcmp (e.col_then, "scale") && e.ops == 6);
    char *p = s_text (kf_prompt_task_product_line, spec, d);
    printf ("%s", p);
    CHECK (kf_test_has (p, "Epilogue: the reduction over each column's rows (a mean of squares) "
                           "and its per-column scale after the product are not in that count: "
                           "it is no elementwise work but a reduction over "
                           "each column's rows (a mean of squares over dim 0: each of the 640 "
                           "columns over all 512 rows), then a per-column scale of each "
                           "element by a factor of the statistic, so no element of a column "
                           "can be finished before all of that column's rows are; per output "
                           "element forward writes 5 operations and 0 libm calls around it and "
                           "the reduction does 1 (an add), 6 in all"));
    CHECK (kf_test_has (p, "a strip of 16 columns over all 512 rows is 32 KiB (its rows 2560 "
                           "bytes apart), half of L2 at most, so it can stay in L2 from its "
                           "last tile's store to the second pass over it"));
    CHECK (!kf_test_has (p, "forward does 5 operations and 0 libm calls after it"));
    free (p);
    //  The ideas: what can be fused and what cannot; threads by columns.
    const char *fuse = s_idea (spec, KF_IDEA_EPILOGUE);
    printf ("%s\n", fuse ? fuse : "(no epilogue idea)");
    CHECK (fuse && kf_test_has (fuse, "by fusing the epilogue (the mean of squares over each "
                                      "column's rows, then a per-column scale) into the product "
                                      "loop as far as it goes: fold each tile into its columns' "
                                      "running sums of squares at the tile's final store, while "
                                      "it is in registers"));
    CHECK (fuse && kf_test_has (fuse, "the scale cannot be applied tile by tile, as it needs "
                                      "every row of the column first: apply it in a second pass "
                                      "over each strip of columns once all 512 of its rows are "
                                      "stored, while the strip is still in cache"));
    CHECK (fuse && !kf_test_has (fuse, "apply it to each tile of outputs while it is in "
                                       "registers"));
    const char *threads = s_idea (spec, KF_IDEA_THREADS);
    printf ("%s\n", threads ? threads : "(no threads idea)");
    CHECK (threads && kf_test_has (threads, "use every core, by column blocks of the output "
                                            "split across threads, each thread owning whole "
                                            "columns over all 512 rows, so that it finishes "
                                            "their mean of squares and per-column scale itself "
                                            "with no partial results combined across threads "
                                            "and no barrier"));
    CHECK (threads && kf_test_has (threads, "its 1/T of in1 and all of in0"));
    CHECK (threads && !kf_test_has (threads, "by row blocks 1/T"));
    //  The working-set line says the same of its two splits.
    p = s_text (kf_prompt_working_set_line, spec, d);
    printf ("%s", p);
    CHECK (kf_test_has (p, "The epilogue reduces over each column's rows: by column blocks "
                           "each thread finishes whole columns by itself; by row blocks the "
                           "threads would combine each column's partial sums of squares across "
                           "threads and wait at a barrier before the second pass."));
    free (p);
    json_decref (d);
    json_decref (spec);
}

//  Other spellings of a reduction over the product's rows, and what is not one.
static void
test_spellings (void)
{
    static const struct {
        const char *ret, *col, *then;
        bool squares;
    } cases[] = {
        { "return p / torch.linalg.vector_norm(p, dim=0)", "vector_norm", "scale", true },
        { "return p * p.pow(2).sum(0, keepdim=True)", "sum", "scale", true },
        { "return p - p.mean(dim=-2, keepdim=True)", "mean", "shift", false },
        { "return p / p.abs().amax(axis=0)", "amax", "scale", false },
        { "return (a @ b).amin(dim=(0,))", "amin", "", false },
        //  A norm's positional argument is its order, not a dimension.
        { "return p / torch.linalg.vector_norm(p, 0)", "", "", false },
        //  Row reductions are the row functions' (round 18, 19), and
        //  dim=1 is left as it was.
        { "return p / p.abs().amax(dim=-1, keepdim=True)", "", "", false },
        { "return p / p.sum(1, keepdim=True)", "", "", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *spec = s_task ("mm_colrms.py", "return p * torch.rsqrt", cases[i].ret, s_colrms,
                               false);
        kf_formula_t fm;
        kf_epilogue_t e;
        CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.col, cases[i].col));
        bool read = kf_prompt_epilogue (spec, &e);
        CHECK (read && !strcmp (e.col, cases[i].col) && !strcmp (e.col_then, cases[i].then));
        CHECK (!*cases[i].col || fm.col_squares == cases[i].squares);
        if (!read || strcmp (e.col, cases[i].col) || strcmp (e.col_then, cases[i].then))
            printf ("case %zu: %s: col '%s' then '%s'\n", i, cases[i].ret, e.col, e.col_then);
        json_decref (spec);
    }
    //  The row's amax keeps its row function.
    json_t *spec = s_task ("mm_colrms.py", "return p * torch.rsqrt",
                           "return p / p.abs().amax(dim=-1, keepdim=True)", s_colrms, false);
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.row, "amax"));
    json_decref (spec);
    //  The statistic as the output: only it is written.
    spec = s_task ("mm_colrms.py", "return p * torch.rsqrt", "return (a @ b).amin(dim=(0,))",
                   s_colrms, false);
    const char *fuse = s_idea (spec, KF_IDEA_EPILOGUE);
    CHECK (fuse && kf_test_has (fuse, "write only the columns' statistics, by fusing the "
                                      "epilogue (the smallest value over each column's rows)"));
    json_decref (spec);
    //  A product the layouts do not read (einsum) gets the same threads
    //  and epilogue ideas from the general list.
    spec = s_task ("mm_colrms.py", "        p = a @ b",
                   "        p = torch.einsum(\"ik,kj->ij\", a, b)", s_colrms, false);
    const char *threads = s_idea (spec, KF_IDEA_THREADS);
    printf ("einsum: %s\n", threads ? threads : "(no threads idea)");
    CHECK (threads && kf_test_has (threads, "by column blocks of the output split across "
                                            "threads, each thread owning whole columns"));
    CHECK (threads && kf_test_has (threads, "its 1/T of B and all of A"));
    fuse = s_idea (spec, KF_IDEA_EPILOGUE);
    CHECK (fuse && kf_test_has (fuse, "second pass over each strip of columns"));
    json_decref (spec);
}

//  An elementwise epilogue keeps its texts byte for byte.
static void
test_elementwise_kept (void)
{
    json_t *spec = s_task ("mm_leaky_rowscale.py", NULL, NULL, s_leaky, true), *d = s_device ();
    kf_epilogue_t e;
    CHECK (kf_prompt_epilogue (spec, &e) && !*e.col && !*e.row);
    const char *fuse = s_idea (spec, KF_IDEA_EPILOGUE);
    printf ("%s\n", fuse ? fuse : "(no epilogue idea)");
    CHECK (fuse && !strcmp (fuse, "write the output once, by fusing the epilogue (the 3 "
                                  "operations forward does after the product) into the product "
                                  "loop: apply it to each tile of outputs while it is in "
                                  "registers" KF_PROMPT_EPILOGUE_K_CHUNKS));
    const char *threads = s_idea (spec, KF_IDEA_THREADS);
    printf ("%s\n", threads ? threads : "(no threads idea)");
    CHECK (threads && !strcmp (threads, "use every core, by output blocks split across threads, "
                                        "each thread's share of the operand it re-reads kept in "
                                        "its own L2 (by column blocks each reads 1/T of in1 and "
                                        "all of in0; by row blocks 1/T of in0 and all of in1)"));
    char *p = s_text (kf_prompt_task_product_line, spec, d);
    CHECK (kf_test_has (p, "Epilogue: the 3 operations after the product are not in that count: "
                           "per output element forward does 3 operations and 0 libm calls "
                           "after it"));
    CHECK (!kf_test_has (p, "column's rows"));
    free (p);
    p = s_text (kf_prompt_working_set_line, spec, d);
    CHECK (kf_test_has (p, "Split over the 2 cores") && !kf_test_has (p, "The epilogue reduces"));
    free (p);
    json_decref (d);
    json_decref (spec);
}

int
main (void)
{
    test_colrms ();
    test_spellings ();
    test_elementwise_kept ();
    return kf_test_done ("test_epilogue_colred");
}
