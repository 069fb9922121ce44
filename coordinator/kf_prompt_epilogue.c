/*  kf_prompt_epilogue.c - a matrix product's epilogue, counted and
 *  estimated (kf_prompt_epilogue.h).
 *
 *  Round 16: the position line's "68% of one core's peak" for
 *  softmax(q @ k^T / 8) counted the product alone and read as room left
 *  in the product loop, which a model's own breakdown put at about 92%
 *  of one core's peak, the softmax taking the rest. No exp rate is
 *  measured on the host, so the epilogue's time is an estimate from its
 *  operation count at the FMA peak, and is said to be one.
 */
#include "kf_prompt_epilogue.h"
#include "kf_text.h"
#include <regex.h>
#include "kf_prompt_facts.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_target.h"
#include "kf_json.h"
#include "kf_str.h"
#include "kf_rates.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

//  What each row function does per output element: its operations and
//  exps, in words; and how its finished row is completed. A softmax's
//  maximum, subtraction, sum and multiply by the row's reciprocal sum
//  beside its exp; a layer norm's two sums (mean and variance) and its
//  subtraction and scaling, a reciprocal square root per row.
//  How a row function is fused into the product: an online maximum and
//  sum (an exp per element), a sum and a sum of squares, or one statistic
//  of the row (a mean, a maximum) that scales it.
typedef enum { S_FUSE_ONLINE, S_FUSE_SUMS, S_FUSE_STAT } s_fuse_t;

static const struct s_row {
    const char *name;
    int ops, exps;
    const char *does, *finish, *label;
    s_fuse_t fuse;
    const char *folds, *stat;   //  S_FUSE_STAT: what a tile folds into, the statistic
} s_rows[] = {
    { "softmax", 4, 1, "one exp, a maximum and a sum pass over its row and a multiply by the "
      "row's reciprocal sum", "scaled by its reciprocal sum", "the softmax", S_FUSE_ONLINE, NULL, NULL },
    { "log_softmax", 4, 1, "one exp, a maximum and a sum pass over its row and a subtraction "
      "of the sum's log", "shifted by its sum's log", "the log_softmax", S_FUSE_ONLINE, NULL, NULL },
    { "layer_norm", 4, 0, "a sum and a sum-of-squares pass over its row (its mean and "
      "variance), a subtraction of the mean and a multiply by the row's reciprocal standard "
      "deviation", "shifted by its mean and scaled by 1/sqrt(variance + eps)", "the layer_norm",
      S_FUSE_SUMS, NULL, NULL },
    //  A row's mean (of squares, in an RMS norm), then a factor of it on
    //  each element.
    //  Round 48: or shifted by it (z - z.mean(dim=1, keepdim=True)).
    { "mean", 3, 0, "a pass over its row for the row's mean (of its squares, for an RMS "
      "norm) before any element of the row can be finished, then each element scaled by a "
      "factor of the mean or shifted by it", "scaled by the factor its mean gives or shifted "
      "by its mean", "the row's mean and its factor or shift", S_FUSE_STAT,
      "sums (of squares or values)", "sum" },
    //  Round 19: a row divided by its largest magnitude, z / amax(|z|),
    //  was told to be finished tile by tile in registers.
    { "amax", 3, 0, "a pass over its row for the row's largest value (of magnitudes, where "
      "the code takes abs first) before any element of the row can be finished, then a "
      "multiply by a factor of the row", "scaled by the factor its maximum gives",
      "the row's maximum and its factor", S_FUSE_STAT, "largest magnitudes", "maximum" },
    //  Round 31: logsumexp over each row, one value a row out.
    { "logsumexp", 3, 1, "a maximum and a sum-of-exponentials pass over its row (the exp of "
      "each element less the maximum), then one log of the sum plus the maximum for the row",
      "reduced to its maximum plus the log of its sum", "the logsumexp", S_FUSE_ONLINE,
      "maxima and sums of exponentials", "maximum and sum of exponentials" },
    //  Round 46: a row's plain sum, one value a row out.
    { "sum", 1, 0, "an add of each element into its row's sum, one value a row out",
      "reduced to its sum", "the row's sum", S_FUSE_STAT, "sums", "sum" },
    //  Round 30: F.normalize over the last dimension, y / max(||y||, eps).
    { "normalize", 3, 0, "a pass over its row for the sum of its squares (its Euclidean "
      "length) before any element of the row can be finished, then a multiply by "
      "1/max(length, eps)", "scaled by 1/max(its length, eps)",
      "the row's length and its factor", S_FUSE_STAT, "sums of squares", "sum of squares" },
};

static const struct s_row *
s_row (const char *name)
{
    for (size_t i = 0; i < sizeof s_rows / sizeof s_rows[0]; i++)
        if (!strcmp (s_rows[i].name, name))
            return &s_rows[i];
    return NULL;
}

//  Round 32: whether E's column function is a softmax (each column
//  mapped to a distribution, or its log), not a reduction.
static bool
s_col_softmax (const kf_epilogue_t *e)
{
    return !strcmp (e->col, "softmax") || !strcmp (e->col, "log_softmax");
}

//  Round 24: the reduction over each column's rows in words, from FM,
//  into E; false where it is no such reduction: dim 0 of a batched
//  product reduces over its batches. The reduction's own operations an
//  element: an add, a maximum or a minimum; a norm's square besides.
static bool
s_col_read (const kf_formula_t *fm, const long long mnk[3], double flops, kf_epilogue_t *e)
{
    if (!*fm->col || (fm->col_dim == 0
                      && flops > 1.5 * 2.0 * (double) mnk[0] * (double) mnk[1] * (double) mnk[2]))
        return false;
    memcpy (e->col, fm->col, sizeof e->col);
    e->col_dim = fm->col_dim;
    if (s_col_softmax (e)) {
        snprintf (e->col_stat, sizeof e->col_stat, "maximum and sum of exponentials");
        snprintf (e->col_fold, sizeof e->col_fold, "maxima and sums of exponentials");
        snprintf (e->col_then, sizeof e->col_then, "exp and %s",
                  strcmp (e->col, "softmax") ? "shift" : "scale");
        e->ops += 4;
        e->calls += 1;
        return true;
    }
    bool norm = !strcmp (fm->col, "norm") || !strcmp (fm->col, "vector_norm");
    bool sum = !strcmp (fm->col, "mean") || !strcmp (fm->col, "sum"), max = !strcmp (fm->col,
                                                                                     "amax");
    const char *of = fm->col_squares ? " of squares" : fm->col_abs ? " of magnitudes" : "";
    if (norm)
        snprintf (e->col_stat, sizeof e->col_stat, "norm (a sum of squares' square root)");
    else if (sum)
        snprintf (e->col_stat, sizeof e->col_stat, "%s%s", fm->col, of);
    else
        snprintf (e->col_stat, sizeof e->col_stat, "%s %s", max ? "largest" : "smallest",
                  fm->col_abs ? "magnitude" : "value");
    snprintf (e->col_fold, sizeof e->col_fold, "%s%s", norm || sum ? "sums" : max ? "maxima"
                                                                         : "minima",
              norm ? " of squares" : of);
    unsigned scale = 1u << KF_OP_MUL | 1u << KF_OP_DIV | 1u << KF_OP_SQRT;
    snprintf (e->col_then, sizeof e->col_then, "%s", fm->col_outer ? ""
                                                     : fm->col_after & scale ? "scale"
                                                     : fm->col_after & (1u << KF_OP_ADD) ? "shift"
                                                                                          : "step");
    e->ops += norm ? 2 : 1;
    return true;
}

bool
kf_prompt_epilogue (json_t *spec, kf_epilogue_t *e)
{
    memset (e, 0, sizeof *e);
    kf_formula_t fm;
    long long mnk[3];
    double flops = kf_prompt_matmul_flops (spec, mnk);
    if (!(flops > 0) || !kf_prompt_formula (spec, &fm) || !fm.product
        || (!*fm.row && !*fm.col && fm.epi_ops <= 0 && fm.after_product <= 0))
        return false;
    memcpy (e->row, fm.row, sizeof e->row);
    e->ops = fm.epi_ops;
    e->calls = fm.after_product;
    const struct s_row *row = s_row (e->row);
    if (row) {
        e->ops += row->ops;
        e->calls += row->exps;
    }
    if (!row && !s_col_read (&fm, mnk, flops, e) && e->ops <= 0 && e->calls <= 0) {
        memset (e, 0, sizeof *e);
        return false;
    }
    memcpy (e->mnk, mnk, sizeof e->mnk);
    e->flops = flops;
    if (fm.after_product > 0)
        snprintf (e->names, sizeof e->names, "%s", fm.names);
    e->outputs = kf_prompt_output_elements (spec);
    double product = (double) mnk[0] * (double) mnk[1];
    if (row && product > 1.5 * e->outputs) {
        e->reduced = true;
        e->outputs = product;
    }
    e->call_vops = fm.after_vops + (row ? row->exps * KF_PROMPT_EXP_OPS : 0);
    e->vector_ops = e->ops + e->call_vops;
    return e->outputs > 0;
}

bool
kf_prompt_epilogue_ms (json_t *spec, json_t *d, kf_epilogue_t *e, double *product_ms,
                       double *epi_ms)
{
    double peak = kf_jnum (d, "peak_gflops_one_core", 0);
    if (!kf_prompt_epilogue (spec, e) || !(peak > 0))
        return false;
    *product_ms = e->flops / peak * 1e-6;
    //  An operation an element is one vector lane's share of an FMA's
    //  issue slot; the peak counts an FMA as 2.
    *epi_ms = e->outputs * e->vector_ops * 2 / peak * 1e-6;
    return *epi_ms > 0 && *product_ms > 0;
}

//  "the softmax", "the tanh and the arithmetic", "the 1 operation";
//  returns whether its verb takes the plural (round 19: "the 3
//  operations after the product is not in that count").
static bool
s_what (FILE *f, const kf_epilogue_t *e)
{
    const struct s_row *row = s_row (e->row);
    if (row) {
        fputs (row->label, f);
        return strstr (row->label, " and ") != NULL;
    }
    if (*e->col) {
        fprintf (f, "the reduction over each column's rows (a %s)%s%s", e->col_stat,
                 *e->col_then ? " and its per-column " : "", e->col_then);
        return *e->col_then;
    }
    if (*e->names) {
        fprintf (f, "the %s%s", e->names, e->ops > 0 ? " and the arithmetic" : "");
        return e->ops > 0 || strchr (e->names, ',') || strstr (e->names, " and ");
    }
    fprintf (f, "the %d operation%s", e->ops, e->ops == 1 ? "" : "s");
    return e->ops != 1;
}

//  The product's share of the estimated floor, and what a kernel's
//  figures would show there.
static void
s_floor (FILE *f, double product, double epi)
{
    fprintf (f, "With the product's %.3g ms at one core's FMA peak, the estimated one-core "
             "floor is %.3g ms, of which the product is %.0f%%: a kernel at that floor would show "
             "%.0f%% of one core's peak in the product's figures, and the percent of the peak "
             "given for a kernel excludes this work.", product, product + epi,
             100 * product / (product + epi), 100 * product / (product + epi));
}

void
kf_prompt_epilogue_position (FILE *f, json_t *spec, json_t *d)
{
    kf_epilogue_t e;
    double product, epi;
    if (!kf_prompt_epilogue_ms (spec, d, &e, &product, &epi))
        return;
    fputs (" Those shares are the product's alone: ", f);
    bool plural = s_what (f, &e);
    fprintf (f, " after it %s not counted (estimated at %.3g ms of one core, the Target "
             "section's Epilogue line). ", plural ? "are" : "is", epi);
    s_floor (f, product, epi);
}

//  Round 24: "Epilogue: ... 5 operations and 0 libm calls" of a column's
//  RMS hid that its rsqrt needs every row of the column first. What the
//  reduction over each column's rows is, what follows it, and the count
//  (per element, those on the statistic included as if per element).
static void
s_col_does (FILE *f, const kf_epilogue_t *e)
{
    const long long *mnk = e->mnk;
    if (s_col_softmax (e)) {
        fprintf (f, "it is no elementwise work but a %s over each column (dim %d: each of the "
                 "%lld columns over all %lld rows): a maximum and a sum-of-exponentials pass "
                 "over the column, then each element's exp %s, so no element of a column can "
                 "be finished before all of that column's rows are; %d operation%s and %d "
                 "call%s an element in all", e->col, e->col_dim, mnk[1], mnk[0],
                 strcmp (e->col, "softmax") ? "shifted by the column's log-sum"
                                            : "scaled by the column's reciprocal sum",
                 e->ops, e->ops == 1 ? "" : "s", e->calls, e->calls == 1 ? "" : "s");
        return;
    }
    bool norm = !strcmp (e->col, "norm") || !strcmp (e->col, "vector_norm");
    fprintf (f, "it is no elementwise work but a reduction over each column's rows (a %s over "
             "dim %d: each of the %lld columns over all %lld rows)", e->col_stat, e->col_dim,
             mnk[1], mnk[0]);
    if (*e->col_then)
        fprintf (f, ", then a per-column %s of each element %s, so no element of a column can "
                 "be finished before all of that column's rows are", e->col_then,
                 !strcmp (e->col_then, "scale") ? "by a factor of the statistic"
                 : !strcmp (e->col_then, "shift") ? "by the statistic" : "with the statistic");
    else
        fputs (", whose result is the output", f);
    int own = norm ? 2 : 1;
    fprintf (f, "; per output element forward writes %d operation%s and %d libm call%s%s%s%s "
             "around it and the reduction does %d (%s), %d in all, those on a column's "
             "statistic (done once per column) counted as if per element", e->ops - own,
             e->ops - own == 1 ? "" : "s", e->calls, e->calls == 1 ? "" : "s",
             *e->names ? " (" : "", e->names, *e->names ? ")" : "", own,
             norm ? "a square and an add" : !strcmp (e->col, "amax") ? "a maximum"
             : !strcmp (e->col, "amin") ? "a minimum" : "an add", e->ops);
}

//  The column strip the per-column step's second pass reads: 16 columns
//  (two 8-lane vectors) over all rows, against the host's caches.
static void
s_col_strip (FILE *f, json_t *spec, json_t *d, const long long mnk[3])
{
    json_t *out = json_array_get (json_object_get (spec, "outputs"), 0);
    double elem = kf_prompt_tensor_bytes (out) / (double) (mnk[0] * mnk[1] > 0 ? mnk[0] * mnk[1]
                                                                                  : 1);
    double strip = 16.0 * (double) mnk[0] * elem;
    double l1 = kf_jnum (d, "l1d_bytes", 0), l2 = kf_jnum (d, "l2_bytes", 0);
    double stride = (double) mnk[1] * elem;
    fprintf (f, "; a strip of 16 columns over all %lld rows is %.0f KiB (its rows %.0f bytes "
             "apart)", mnk[0], strip / 1024, stride);
    //  Round 33: "half of L2 at most, so it can stay in L2" of a strip
    //  whose rows 4096 bytes apart take one line each in the same few sets.
    if (kf_prompt_stride_aliases ((long long) stride))
        fputs (", a multiple of 4 KiB: the strip's line in each row falls in the same few "
               "sets of every cache level (the Row strides paragraph), so far less of it than "
               "its size stays cached from its last tile's store to a second pass over it; "
               "fold the statistics as its tiles are stored, or copy or pad the strip", f);
    else if (l1 > 0 && l2 > 0)
        fprintf (f, ", %s from its last tile's store to the second pass over it",
                 strip <= l1 / 2 ? "half of L1 at most, so it can stay in L1"
                 : strip <= l2 / 2 ? "half of L2 at most, so it can stay in L2"
                                   : "more than half of L2, so it may not stay in L2");
}

//  Whether E's calls are all exps (a softmax's), counted at an exp's
//  operations.
static bool
s_exps_only (const kf_epilogue_t *e)
{
    return !*e->names || !strcmp (e->names, "exp");
}

//  Round 50: (x @ w) * sigmoid(g) read g, as large as the output, at
//  every tile's end, and the Epilogue line counted its arithmetic alone;
//  prefetching g's tiles during the k loop gained 6%. Inputs with as
//  many elements as the output, past the product's two operands, said
//  with their cold read time against FLOOR_MS.
static void
s_epilogue_inputs (FILE *f, json_t *spec, json_t *d, double floor_ms)
{
    double outputs = kf_prompt_output_elements (spec), bytes = 0;
    char names[96] = "";
    size_t i, n = 0;
    json_t *t;
    json_array_foreach (json_object_get (spec, "inputs"), i, t) {
        if (i < 2 || kf_prompt_tensor_elements (t) < outputs || !(outputs > 0))
            continue;
        bytes += kf_prompt_tensor_bytes (t);
        if (n + 16 < sizeof names)
            n += (size_t) snprintf (names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                    kf_jstr (t, "name"));
    }
    double gbs = kf_jnum (d, "read_cold_one_core_gbs", 0);
    if (!(bytes > 0) || !(gbs > 0) || !(floor_ms > 0))
        return;
    char b[32];
    double ms = bytes / gbs * 1e-6;
    fprintf (f, " The epilogue also reads %s, %s as large as the output (%s), which no count "
             "above holds: about %.3g ms at one core's cold read rate (%.1f GB/s), %.0f%% of "
             "that floor, met at each tile's end unless its tile is prefetched ahead (during "
             "the k loop); fusing the epilogue does not remove it.", names,
             strchr (names, ',') ? "each" : "one", kf_rates_bytes (bytes, b, sizeof b), ms, gbs,
             100 * ms / floor_ms);
}

void
kf_prompt_epilogue_text (FILE *f, json_t *spec, json_t *d)
{
    kf_epilogue_t e;
    double product, epi;
    if (!kf_prompt_epilogue_ms (spec, d, &e, &product, &epi))
        return;
    bool plural = s_what (f, &e);
    fprintf (f, " after the product %s not in that count: %s", plural ? "are" : "is",
             *e.col ? "" : e.reduced ? "per element of the product " : "per output element ");
    const struct s_row *row = s_row (e.row);
    int besides = e.ops - (row ? row->ops : 0), more = e.calls - (row ? row->exps : 0);
    if (*e.col)
        s_col_does (f, &e);
    else if (row) {
        fprintf (f, "it does %s", row->does);
        if (besides > 0)
            fprintf (f, ", and %d operation%s forward writes after the product besides",
                     besides, besides == 1 ? "" : "s");
        if (more > 0)
            fprintf (f, ", and %d libm call%s", more, more == 1 ? "" : "s");
        fprintf (f, ": %d operation%s", e.ops, e.ops == 1 ? "" : "s");
        if (e.calls > 0)
            fprintf (f, " and %d call%s", e.calls, e.calls == 1 ? "" : "s");
        fputs (" in all", f);
    }
    else
        fprintf (f, "forward does %d operation%s and %d libm call%s%s%s%s after it", e.ops,
                 e.ops == 1 ? "" : "s", e.calls, e.calls == 1 ? "" : "s",
                 *e.names ? " (" : "", e.names, *e.names ? ")" : "");
    //  Round 48: a tanh epilogue was counted as an exp's 10 operations
    //  beside the Target section's 16 for it.
    if (e.calls > 0 && s_exps_only (&e))
        fprintf (f, ", each call taken as about %d operations an element (an estimate from an "
                 "exp's operation count: a range reduction, a degree-5 polynomial, the 2^k "
                 "scaling; no exp rate is measured on this host)", KF_PROMPT_EXP_OPS);
    else if (e.calls > 0)
        fprintf (f, ", the call%s taken as about %d operations an element%s (%s: an "
                 "estimate of SIMD code near f32 precision, a range reduction, a polynomial "
                 "and a division where the function needs one; no call's rate is measured on "
                 "this host)", e.calls == 1 ? "" : "s", e.call_vops,
                 e.calls == 1 ? "" : " in all", e.names);
    //  Round 20: "vector operations" beside "an element" read as 8 times
    //  too many; each operation an element is one lane of a vector
    //  instruction.
    fprintf (f, ", so about %.0f an element over %.0f %s, each operation one lane of a "
             "vector instruction: about %.3g ms at one core's measured FMA peak (%.0f GFLOP/s, "
             "each vector instruction in an FMA's issue slot; an estimate)", e.vector_ops,
             e.outputs, e.reduced ? "elements of the product (one value a row is output)"
                                  : "outputs", epi, kf_jnum (d, "peak_gflops_one_core", 0));
    //  A row function's passes over a row cost arithmetic, not memory,
    //  where the row stays in L1.
    json_t *out = json_array_get (json_object_get (spec, "outputs"), 0);
    json_t *shape = json_object_get (out, "shape");
    double width = e.reduced ? (double) e.mnk[1]
                             : (double) json_integer_value (json_array_get (shape,
                                                                            json_array_size (shape)
                                                                                - 1));
    double elem = kf_prompt_tensor_bytes (out) / fmax (kf_prompt_output_elements (spec), 1);
    double row_bytes = width * elem;
    if (row && width > 0 && row_bytes <= 16384)
        fprintf (f, "; a row of %.0f %s is %.0f bytes and stays in L1 between its passes, "
                 "so they cost arithmetic, not memory", width,
                 e.reduced ? "products" : "outputs", row_bytes);
    if (*e.col && *e.col_then)
        s_col_strip (f, spec, d, e.mnk);
    fputs (". ", f);
    s_floor (f, product, epi);
    s_epilogue_inputs (f, spec, d, product + epi);
}

void
kf_prompt_epilogue_line (FILE *f, json_t *spec, json_t *d)
{
    kf_epilogue_t e;
    double product, epi;
    if (!kf_prompt_epilogue_ms (spec, d, &e, &product, &epi))
        return;
    fputs ("  Epilogue: ", f);
    kf_prompt_epilogue_text (f, spec, d);
    fputs ("\n", f);
}

void
kf_prompt_epilogue_brief (FILE *f, json_t *spec, json_t *d)
{
    kf_epilogue_t e;
    double product, epi;
    if (!kf_prompt_epilogue_ms (spec, d, &e, &product, &epi))
        return;
    fputs ("; ", f);
    s_what (f, &e);
    //  Round 17: "an exp as 10" was said of a layer norm, which has none.
    char exps[96] = "";
    if (e.calls > 0 && s_exps_only (&e))
        snprintf (exps, sizeof exps, ", an exp as %d", KF_PROMPT_EXP_OPS);
    else if (e.calls > 0)
        snprintf (exps, sizeof exps, ", %s as %d in all", e.names, e.call_vops);
    fprintf (f, " after the product is not counted (estimated at %.3g ms of one core from its "
             "%.0f operations an element%s; the product is %.0f%% of the estimated %.3g ms "
             "one-core floor)", epi, e.vector_ops, exps, 100 * product / (product + epi),
             product + epi);
}

void
kf_prompt_tolerance_within (json_t *spec, char *out, size_t size)
{
    json_t *tol = json_object_get (spec, "tolerance");
    if (json_is_number (json_object_get (tol, "rtol"))
        && json_is_number (json_object_get (tol, "atol")))
        snprintf (out, size, "the task's tolerance (rtol %g, atol %g)",
                  json_number_value (json_object_get (tol, "rtol")),
                  json_number_value (json_object_get (tol, "atol")));
    else
        snprintf (out, size, "the task's tolerance");
}

//  Whether SPEC's forward takes a row's mean of a product itself: a name
//  set from the product (`z = F.linear (...)`, `z = a @ b`) whose .mean()
//  forward takes, no function of it in between.
static bool
s_linear_mean (json_t *spec)
{
    json_t *ref = json_object_get (spec, "reference");
    char *code = kf_prompt_python_code (kf_jstr (ref, "source"));
    bool linear = false;
    regex_t re;
    regmatch_t m[2];
    if (code && regcomp (&re, "([[:alpha:]_][[:alnum:]_]*)[[:space:]]*=[[:space:]]*"
                              "(F\\.linear|torch\\.matmul|torch\\.mm|torch\\.addmm|"
                              "[[:alpha:]_][[:alnum:]_.]*[[:space:]]*@)", REG_EXTENDED) == 0) {
        if (regexec (&re, code, 2, m, 0) == 0 && m[1].rm_eo - m[1].rm_so < 48) {
            char pattern[160];
            snprintf (pattern, sizeof pattern, "\\b%.*s\\.mean[[:space:]]*\\(",
                      (int) (m[1].rm_eo - m[1].rm_so), code + m[1].rm_so);
            linear = kf_text_matches (code, pattern);
        }
        regfree (&re);
    }
    free (code);
    return linear;
}

char *
kf_prompt_epilogue_idea (json_t *spec)
{
    //  Round 51: (x @ u) @ v was handed "fusing the epilogue (bias,
    //  activation)", which it has not: a chain's fusion is its own.
    char *chain = kf_prompt_chain_idea (spec);
    if (chain)
        return chain;
    kf_epilogue_t e;
    if (!kf_prompt_epilogue (spec, &e))
        return NULL;
    char within[96];
    kf_prompt_tolerance_within (spec, within, sizeof within);
    const struct s_row *row = s_row (e.row);
    const long long *mnk = e.mnk;
    //  Round 24: "apply it to each tile of outputs while it is in
    //  registers" cannot be done where each element waits for its whole
    //  column's statistic: only the statistic is fused.
    if (*e.col && !*e.col_then)
        return kf_strdupf ("write only the columns' statistics, by fusing the epilogue (the %s "
                           "over each column's rows) into the product loop: fold each tile "
                           "into its columns' running %s at the tile's final store, while it "
                           "is in registers%s, and never store the product itself",
                           e.col_stat, e.col_fold, KF_PROMPT_EPILOGUE_K_CHUNKS);
    if (*e.col)
        return kf_strdupf ("write the output once and read it back only from cache, by fusing "
                           "the epilogue (the %s over each column's rows, then a per-column "
                           "%s) into the product loop as far as it goes: fold each tile into "
                           "its columns' running %s at the tile's final store, while it is in "
                           "registers%s%s; the %s cannot be applied tile by tile, as it needs "
                           "every row of the column first: apply it in a second pass over each "
                           "strip of columns once all %lld of its rows are stored, while the "
                           "strip is still in cache, within %s",
                           e.col_stat, e.col_then, e.col_fold, KF_PROMPT_EPILOGUE_K_CHUNKS,
                           s_col_softmax (&e) ? " (online: rescale a column's running sum by "
                                                "e^(old max - new max) when its maximum grows)"
                                              : "",
                           e.col_then, mnk[0], within);
    //  Round 31: a row reduced to one value: the product is never stored.
    if (row && e.reduced)
        return kf_strdupf ("never store the product, by fusing the epilogue (%s over each row) "
                           "into the product: fold each tile of the product into its rows' "
                           "running %s while the tile sits in registers%s%s%s, and write each "
                           "row's one value once its last tile is folded",
                           row->label, row->folds ? row->folds : "sums and sums of squares",
                           row->fuse == S_FUSE_ONLINE ? " (online: rescale the running sum by "
                                                        "e^(old max - new max) when the maximum "
                                                        "grows; an exp cheaper than libm's "
                                                        "that stays within " : "",
                           row->fuse == S_FUSE_ONLINE ? within : "",
                           row->fuse == S_FUSE_ONLINE ? ")" : "");
    if (row && row->fuse == S_FUSE_ONLINE)
        return kf_strdupf ("write each row of outputs once, by fusing the epilogue (the %s "
                           "over each row) into the product: apply it to each tile of outputs "
                           "while they sit in registers, with the scaling folded into the "
                           "exp's argument, the row's maximum and sum kept in one pass (an "
                           "online %s: rescale the running sum by e^(old max - new max) when "
                           "the maximum grows), an exp cheaper than libm's that stays within "
                           "%s, and the finished row %s while it is still in L1",
                           e.row, e.row, within, row->finish);
    //  Round 49: z - z.mean(dim=1, keepdim=True) of a linear layer: all
    //  five kernels took a row's mean as a dot product with W's mean row,
    //  and the idea spoke only of folding sums and a second pass in L1.
    if (row && row->fuse == S_FUSE_STAT && s_linear_mean (spec))
        return kf_strdupf ("write each row of outputs once, by fusing the epilogue (%s, over "
                           "each row) into the product: a row's mean of the product is linear "
                           "in it, the first operand's row dotted with the mean of the %lld "
                           "vectors of the second operand that make the output's columns (W's "
                           "rows in x @ W^T), plus the bias's mean where there is one, so it "
                           "can be had before any tile of the row, as one more dot product a "
                           "row (exact up to rounding), and each tile finished in registers; "
                           "or fold each tile into its rows' %s and finish the row "
                           "(%s) while it is still in L1 (within %s)",
                           row->label, mnk[1], row->folds, row->finish, within);
    if (row && row->fuse == S_FUSE_STAT)
        return kf_strdupf ("write each row of outputs once, by fusing the epilogue (%s, over "
                           "each row) into the product: fold each tile into its rows' %s while "
                           "the tile sits in registers, store the tile, and finish the row (%s) "
                           "while it is still in L1 (no element can be finished before its "
                           "whole row's %s is known, within %s)",
                           row->label, row->folds, row->finish, row->stat, within);
    if (row)
        return kf_strdupf ("write each row of outputs once, by fusing the epilogue (the %s "
                           "over each row) into the product: keep each row's sum and sum of "
                           "squares while its tiles of outputs sit in registers (one pass; "
                           "Welford's update where the two sums would cancel, within %s), and "
                           "the finished row %s while it is still in L1", e.row, within,
                           row->finish);
    char what[128];
    if (*e.names)
        snprintf (what, sizeof what, "the %s%s", e.names,
                  e.ops > 0 ? " and the arithmetic forward does after the product" : "");
    else
        snprintf (what, sizeof what, "the %d operation%s forward does after the product",
                  e.ops, e.ops == 1 ? "" : "s");
    return kf_strdupf ("write the output once, by fusing the epilogue (%s) into the product "
                       "loop: apply it to each tile of outputs while it is in registers%s%s",
                       what, e.calls > 0 ? ", its calls as vector code within the task's "
                                           "tolerance, never a libm call per element"
                                         : "",
                       KF_PROMPT_EPILOGUE_K_CHUNKS);
}

char *
kf_prompt_epilogue_threads_idea (json_t *spec, const char *a, const char *b)
{
    kf_epilogue_t e;
    if (!kf_prompt_epilogue (spec, &e))
        return NULL;
    const long long *mnk = e.mnk;
    const struct s_row *row = s_row (e.row);
    //  Round 30: a row's epilogue offered "by column blocks ... or by row
    //  blocks" as equals, where column blocks split each row's statistic.
    if (row)
        return kf_strdupf ("use every core, by row blocks of the output split across threads, "
                           "each thread owning whole rows over all %lld columns, so that it "
                           "finishes the epilogue (%s) of each of its rows itself with no "
                           "partial results combined across threads and no barrier (column "
                           "blocks would need both, the epilogue reducing over each row); each "
                           "thread re-reads its 1/T of %s and all of %s, its share kept in its "
                           "own L2 where it fits", mnk[1], row->label, a, b);
    if (!*e.col)
        return NULL;
    return kf_strdupf ("use every core, by column blocks of the output split across threads, "
                       "each thread owning whole columns over all %lld rows, so that it "
                       "finishes their %s%s%s itself with no partial results combined across "
                       "threads and no barrier (row blocks would need both, the epilogue "
                       "reducing over each column's rows); each thread re-reads its 1/T of %s "
                       "and all of %s, its share kept in its own L2 where it fits", mnk[0],
                       e.col_stat, *e.col_then ? " and per-column " : "", e.col_then, b, a);
}

void
kf_prompt_epilogue_split (FILE *f, json_t *spec)
{
    kf_epilogue_t e;
    if (!kf_prompt_epilogue (spec, &e))
        return;
    const struct s_row *row = s_row (e.row);
    if (row) {
        fprintf (f, " The epilogue reduces over each row: by row blocks each thread finishes "
                 "whole rows by itself; by column blocks the threads would combine each row's "
                 "partial %s across threads and wait at a barrier before finishing it.",
                 row->folds ? row->folds : "statistics");
        return;
    }
    if (!*e.col)
        return;
    fprintf (f, " The epilogue reduces over each column's rows: by column blocks each thread "
             "finishes whole columns by itself; by row blocks the threads would combine each "
             "column's partial %s across threads%s.", e.col_fold,
             *e.col_then ? " and wait at a barrier before the second pass" : "");
}
