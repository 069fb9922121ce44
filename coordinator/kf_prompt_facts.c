/*  kf_prompt_facts.c - tensors, scalars, shape cases and the tolerance
 *  in a prompt (kf_prompt_facts.h).
 *
 *  A native task declares how its inputs are drawn (dist), and the
 *  evaluator draws exactly that, so the declaration is the truth. A
 *  PyTorch task's inputs are whatever get_inputs() and the module's
 *  constructor make: the derived task carries only a default dist that
 *  the evaluator never uses, so it is not shown; the prompt points at
 *  the source and gives the measured statistics where the reference job
 *  reported them.
 */
#include "kf_prompt_facts.h"
#include "kf_prompt_class.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_layout.h"
#include "kf_json.h"
#include "kf_task.h"
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool
s_pytorch (json_t *spec)
{
    return !strcmp (kf_jstr (json_object_get (spec, "reference"), "language"), "pytorch");
}

static void
s_shape (FILE *f, json_t *shape)
{
    fputs ("[", f);
    size_t i;
    json_t *d;
    json_array_foreach (shape, i, d)
        fprintf (f, "%s%lld", i ? ", " : "", (long long) json_integer_value (d));
    fputs ("]", f);
}

static void
s_dist (FILE *f, json_t *dist)
{
    const char *kind = kf_jstr (dist, "kind");
    if (!strcmp (kind, "normal"))
        fprintf (f, "normal, mean %g, std %g", kf_jnum (dist, "mean", 0),
                 kf_jnum (dist, "std", 1));
    else if (!strcmp (kind, "uniform"))
        fprintf (f, "uniform on [%g, %g)", kf_jnum (dist, "low", -1), kf_jnum (dist, "high", 1));
    else if (!strcmp (kind, "constant"))
        fprintf (f, "every element %g", kf_jnum (dist, "value", 0));
    else if (!strcmp (kind, "heavy_tail"))
        fprintf (f, "%g x Student-t with %g degrees of freedom (heavy tails: expect values "
                 "far from 0)", kf_jnum (dist, "scale", 1), kf_jnum (dist, "dof", 3));
    else
        fprintf (f, "%s", *kind ? kind : "normal, mean 0, std 1");
}

static void
s_stats (FILE *f, json_t *st)
{
    fprintf (f, "measured in the first exported set: min %.4g, max %.4g, mean %.4g, std %.4g, "
             "%.1f%% zeros", kf_jnum (st, "min", 0), kf_jnum (st, "max", 0),
             kf_jnum (st, "mean", 0), kf_jnum (st, "std", 0),
             100 * kf_jnum (st, "zero_fraction", 0));
}

static void
s_scalars (FILE *f, json_t *spec)
{
    json_t *scalars = json_object_get (spec, "scalars");
    if (!json_object_size (scalars))
        return;
    const char *src = kf_jstr (json_object_get (spec, "reference"), "source");
    bool torch = s_pytorch (spec);
    json_t *init = torch ? kf_prompt_python_params (src, "__init__") : NULL;
    json_t *fwd = torch ? kf_prompt_python_params (src, "forward") : NULL;
    fputs ("Scalars (read with kf_scalar(ctx, \"NAME\", fallback)):\n", f);
    const char *key;
    json_t *v;
    json_object_foreach (scalars, key, v) {
        fprintf (f, "- %s = %.10g", key, json_number_value (v));
        long idx;
        char *end;
        if (torch && !strncmp (key, "init", 4) && (idx = strtol (key + 4, &end, 10)) >= 0
            && !*end) {
            const char *p = json_string_value (json_array_get (init, (size_t) idx));
            fprintf (f, ": get_init_inputs()[%ld], the module constructor's argument", idx);
            if (p)
                fprintf (f, " '%s'", p);
        }
        else if (torch && !strncmp (key, "in", 2) && (idx = strtol (key + 2, &end, 10)) >= 0
                 && !*end) {
            const char *p = json_string_value (json_array_get (fwd, (size_t) idx));
            fprintf (f, ": forward's argument %ld", idx);
            if (p)
                fprintf (f, " '%s'", p);
            fputs (", not a tensor", f);
        }
        fputs ("\n", f);
    }
    json_decref (init);
    json_decref (fwd);
}

void
kf_prompt_data_section (FILE *f, json_t *spec, json_t *stats)
{
    bool torch = s_pytorch (spec);
    fputs ("\n## Data\nInputs, in the order of in[]:\n", f);
    json_t *inputs = json_object_get (spec, "inputs");
    size_t i;
    json_t *t;
    json_array_foreach (inputs, i, t) {
        fprintf (f, "- %s: %s ", kf_jstr (t, "name"), kf_jstr (t, "dtype"));
        s_shape (f, json_object_get (t, "shape"));
        fputs ("; values: ", f);
        json_t *st = json_array_get (stats, i);
        if (!torch)
            s_dist (f, json_object_get (t, "dist"));
        else if (!strncmp (kf_jstr (t, "name"), "in", 2) && isdigit ((unsigned char)
                                                              kf_jstr (t, "name")[2]))
            fputs ("as the reference's get_inputs() draws them with the run's seed (read "
                   "its source for the scale)", f);
        else
            fputs ("the module's own tensor, as its constructor made it with the run's "
                   "seed (read the reference for how)", f);
        if (json_is_object (st)) {
            fputs ("; ", f);
            s_stats (f, st);
        }
        fputs ("\n", f);
    }
    fputs ("Outputs, in the order of out[]:\n", f);
    json_array_foreach (json_object_get (spec, "outputs"), i, t) {
        fprintf (f, "- %s: %s ", kf_jstr (t, "name"), kf_jstr (t, "dtype"));
        s_shape (f, json_object_get (t, "shape"));
        fputs ("\n", f);
    }
    kf_prompt_layout_note (f, spec);
    s_scalars (f, spec);
    json_t *cases = json_object_get (spec, "shapes");
    if (json_array_size (cases)) {
        fprintf (f, "Shape cases: besides the shapes above (the main case, the only one "
                 "timed) the kernel must be right for each of these %zu, read from the "
                 "tensors' shape fields at run time (tensors not named keep their main "
                 "shape):\n", json_array_size (cases));
        json_t *c;
        json_array_foreach (cases, i, c) {
            fprintf (f, "- case %zu:", i + 1);
            const char *name;
            json_t *shape;
            int k = 0;
            json_object_foreach (c, name, shape) {
                fprintf (f, "%s %s ", k++ ? "," : "", name);
                s_shape (f, shape);
            }
            fputs ("\n", f);
        }
    }
    else
        fputs ("Shapes: only the shapes above are checked and timed.\n", f);
}

//  Which hardware reciprocal estimates stay within a relative BUDGET
//  without a Newton step (round 19: "AVX-512's rcp14" was named on an
//  AVX2 host, and as within any budget).
//  exp, log, tanh and erf less those in NAMES (the task's own, ", "
//  between), into BUF (round 20: "this task's pow, tanh, as of any such
//  as exp, log, tanh, erf" named tanh twice, in broken words).
static const char *
s_others (const char *names, char *buf, size_t size)
{
    static const char *const common[] = { "exp", "log", "tanh", "erf" };
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        if (!kf_prompt_formula_named (names, common[i]) && used < size)
            used += (size_t) snprintf (buf + used, size - used, "%s%s", used ? ", " : "",
                                       common[i]);
    return buf;
}

static const char *
s_estimates (double budget)
{
    //  vrcpps and vrsqrtps: relative error at most 1.5 x 2^-12; vrcp14ps
    //  and vrsqrt14ps: 2^-14.
    if (budget >= 1.5 * 0x1p-12)
        return "so do the hardware's reciprocal and reciprocal square root estimates "
               "(AVX2's vrcpps and vrsqrtps, 1.5 x 2^-12 = 3.7e-04 relative; AVX-512's "
               "vrcp14ps and vrsqrt14ps, 2^-14 = 6.1e-05)";
    if (budget >= 0x1p-14)
        return "so do AVX-512's reciprocal estimates (vrcp14ps and vrsqrt14ps, 2^-14 = "
               "6.1e-05 relative), but not AVX2's vrcpps and vrsqrtps (1.5 x 2^-12 = 3.7e-04) "
               "without a Newton step";
    return "no hardware reciprocal estimate does without a Newton step (AVX2's vrcpps and "
           "vrsqrtps: 1.5 x 2^-12 = 3.7e-04 relative; AVX-512's vrcp14ps and vrsqrt14ps: "
           "2^-14 = 6.1e-05)";
}

//  Round 27: a cumsum of terms of either sign was told that an
//  approximation of rtol / 10 "passes with a tenfold margin where its
//  result reaches the output without cancelling"; a running sum of
//  centred terms crosses zero along every row, so nearly every row
//  cancels somewhere. The budget in numbers: with outputs spread about
//  normally (sd s) and each term's error e relative, the errors add up
//  to about e s, and an output fails where |y| < e s / rtol, a share of
//  about 0.8 e / rtol of them.
static void
s_scan_budget (FILE *f, json_t *spec, double rtol, double match)
{
    double allowed = 1 - match;
    double e = allowed * rtol / 0.8 / 3;
    fprintf (f, " Where a scan's terms take either sign (centred inputs), its running sum passes "
             "near zero along a row, so most rows cancel somewhere: with an error of relative "
             "size e in each term, the errors add up to about e times the sum's typical size, "
             "and an output fails where its own size is below that error divided by rtol: a "
             "share of about 0.8 e / rtol of the outputs (for outputs spread about normally). "
             "e = rtol / 10 fails about 8%%, over the %g%% allowed; keep each term's error "
             "below about %.2g (a third of the %.2g that would fail %g%%), which an "
             "approximation of a few more terms or one Newton step reaches at little cost (a "
             "hardware reciprocal estimate alone does not: refine it).",
             100 * allowed, e, 3 * e, 100 * allowed);
    json_t *ref = json_object_get (spec, "reference");
    if (!strcmp (kf_jstr (ref, "language"), "pytorch") && strstr (kf_jstr (ref, "source"), "cumsum"))
        fputs (" On the CPU, PyTorch accumulates an f32 cumsum in double (its result equals a "
               "cumsum in double rounded to f32): an f32 carry "
               "differs from it by rounding that grows with the row, about the square root of "
               "the row's length times 6e-8 of the sum's size, far inside the tolerance.", f);
}

//  Whether the formula FM (READ: it was read) calls no function and
//  neither divides nor takes a root: a matrix product's epilogue of none
//  (its kinds are not counted), or an elementwise one counted whole.
static bool
s_no_math (bool read, const kf_formula_t *fm)
{
    unsigned costly = (1u << KF_OP_DIV) | (1u << KF_OP_SQRT);
    return read && fm->calls == 0 && !*fm->names && !*fm->row && !*fm->col
           && (fm->product || (fm->counted && !(fm->kinds & costly)));
}

//  Round 34: softplus(x) - 0.5 tanh(x), never below 0.5, was told its
//  terms "can have opposite signs" and to spend less of the budget on
//  each where they cancel, with a budget for sums near zero it never
//  reaches. Where the exported outputs keep one sign, the smallest of
//  them bounds what an error in one term costs: said instead. True
//  when said.
static bool
s_one_sign (FILE *f, json_t *range, double rtol, double atol)
{
    double lo = kf_jnum (range, "min", 0), hi = kf_jnum (range, "max", 0);
    double floor = lo > 0 ? lo : hi < 0 ? -hi : 0;
    if (!(floor > 0) || !(rtol > 0) || floor < atol / rtol)
        return false;
    fprintf (f, " This task adds terms, but in the exported input sets its outputs never "
             "change sign: every one lies between %.3g and %.3g, so no sum comes near zero. "
             "An error of e x T in a term of size T moves an output by at most e x T / %.3g "
             "of its value, within the relative bound wherever e stays below %g / T: a term "
             "no larger than the output may spend the whole budget.", lo, hi, floor,
             rtol * floor);
    return true;
}

//  Round 48: "near zero ... e must stay below 1e-05 / T" left open how
//  many elements that is, and so whether a 2^-14 estimate or an rtol / 10
//  approximation may stand in a term of y = c + (b - c) * Phi(a). An
//  element fails both tests where |y| < e T / rtol (and above atol): with
//  outputs spread about normally around their mean m with deviation s,
//  a share of about 2 e T / rtol x N(0; m, s) of them, N the density.
static void
s_near_zero (FILE *f, json_t *range, double rtol, double match)
{
    double s = kf_jnum (range, "std", 0), m = kf_jnum (range, "mean", 0);
    if (!(s > 0))
        return;
    double density = 0.3989423 / s * exp (-0.5 * (m / s) * (m / s));
    double per_e = 2 * s * density / rtol;   /* share failing per unit e, T = s */
    double allowed = 1 - match;
    fprintf (f, " How many fail: an element fails both tests where |y| is below "
             "e x T / %g, and this task's outputs (mean %.3g, standard deviation %.3g in the "
             "first exported set; taken as spread about normally) put about %.2g x e x T / %.3g "
             "of them there. For terms about as large as the outputs' spread (T near %.3g) and "
             "each error at its largest (an upper figure), "
             "AVX-512's unrefined reciprocal estimates (e = 6.1e-05) fail about %.2g%%, and an "
             "approximation at rtol / 10 (e = %g) about %.2g%%, against the %g%% allowed: an e "
             "up to about %.2g keeps the failures within a third of that share, though not "
             "every element near zero then passes; past it, compute the terms that can "
             "cancel at near f32 precision.", rtol, m, s, per_e, s, s,
             100 * per_e * 6.1e-5, rtol / 10, 100 * per_e * rtol / 10, 100 * allowed,
             allowed / 3 / per_e);
}

void
kf_prompt_tolerance_section (FILE *f, json_t *spec, json_t *output_range)
{
    json_t *tol = json_object_get (spec, "tolerance");
    double rtol = kf_jnum (tol, "rtol", 1e-2), match = kf_jnum (tol, "min_match", 0.99);
    double cosine = kf_jnum (tol, "min_cosine", 0.99985);
    fprintf (f, "\n## What counts as correct\nAn output element passes when its relative error "
             "|got - want| / |want| is below %g, or its absolute error is at most", rtol);
    //  The bound of each output dtype, once.
    char seen[8] = { 0 };
    size_t i;
    json_t *t;
    int n = 0;
    double atol = 0;
    json_array_foreach (json_object_get (spec, "outputs"), i, t) {
        int dt = kf_dtype_from_name (kf_jstr (t, "dtype"));
        if (dt < 0 || dt >= 8 || seen[dt])
            continue;
        seen[dt] = 1;
        atol = n ? atol : kf_task_atol (spec, dt);
        fprintf (f, "%s %g (%s)", n++ ? "," : "", kf_task_atol (spec, dt), kf_dtype_name (dt));
    }
    //  Round 16: "relative error well below 0.001 is fine" read as the
    //  whole budget, where the absolute bound passes every small output.
    if (n == 1 && atol > 0 && rtol > 0)
        fprintf (f, " (either test suffices: where |want| is below %g, the absolute bound is "
                 "the looser, so an error up to %g passes there whatever the relative error)",
                 atol / rtol, atol);
    size_t cases = json_array_size (json_object_get (spec, "shapes"));
    fprintf (f, ". At least %g%% of each output's elements must pass, the cosine similarity "
             "of each whole output with the reference's must be at least %.6g, and NaN or "
             "Inf may appear only where the reference has them. This is checked on 5 fresh "
             "random input sets of the main shape%s, and again on the outputs of the timing "
             "runs.%s\n", 100 * match, cosine,
             cases ? " and 2 of each shape case" : "",
             //  Round 48: a kernel accurate to 8e-7 against a double
             //  reference read "max abs error 2.1e-05 (above the absolute
             //  limit)", the f32 reference's own rounding, unsaid.
             !strcmp (kf_jstr (json_object_get (spec, "reference"), "language"), "pytorch")
                 ? " The reference's outputs are PyTorch's own, computed in the outputs' "
                   "dtype with its own order of summation: every error figure here is against "
                   "them, not against exact values, so it includes their rounding too (for a "
                   "sum of many terms, a few units in the last place of the larger outputs); "
                   "an error of that size is not the kernel's to remove."
                 : "");
    //  Round 16: a softmax's exp was held to "well below 0.001" where
    //  each probability tolerates rtol 0.01; a degree-3 exp made the
    //  run's best kernel. What the output does with the exp decides.
    kf_formula_t fm;
    bool read = kf_prompt_formula (spec, &fm);
    //  Round 32: a softmax over each column (dim 0) read "over its row".
    bool col_softmax = read && !strcmp (fm.col, "softmax") && fm.col_outer;
    bool no_math = s_no_math (read, &fm);
    bool sums = kf_prompt_task_class (spec) != KF_CLASS_ELEMENTWISE || !read || *fm.row
                || *fm.col;
    if (((read && !strcmp (fm.row, "softmax") && fm.row_outer) || col_softmax) && rtol > 0)
        fprintf (f, "So: the output is a softmax, e^(x - max) / sum over its %s. An exp with "
                 "relative error up to e moves each probability by at most about 2e relative "
                 "(e in its numerator, at most e in the %s's sum of such terms), so an exp "
                 "approximation with relative error below %g (rtol / 4, half the bound after "
                 "that doubling) passes every probability, far looser than libm's accuracy; "
                 "a reordered summation is fine too", col_softmax ? "column" : "row",
                 col_softmax ? "column" : "row", rtol / 4);
    //  Round 36: clamp(a @ w + bias) was told of function approximations
    //  and erfc: a formula that calls no function and neither divides nor
    //  takes a root (a product's epilogue of such) has none to make.
    //  Round 51: a Huber loss, elementwise, was told its error "comes
    //  from the order of its sums": it has none.
    else if (rtol > 0 && no_math && !sums)
        fputs ("So: this task calls no function, takes no root or reciprocal and sums "
               "nothing, so it has no approximation to make: its error is each operation's "
               "rounding, and any algebraically equal form of the formula (an FMA, a "
               "reordered product, a select instead of a branch) stays far within the limits",
               f);
    else if (rtol > 0 && no_math)
        fputs ("So: this task calls no function and takes no root or reciprocal, so it has "
               "no approximation to make; its error comes from the order of its sums, which "
               "may be changed freely (a reordered or blocked summation is fine)", f);
    else if (rtol > 0) {
        char others[64];
        //  Round 17: "well below 0.001" read as a ceiling to stay far
        //  under; all three generation-0 kernels kept libm's 1.1e-6
        //  against 1e-2. The budget as a number, in bits and in kind.
        //  Round 18: atan2's task was told of "exp, log, tanh, erf" only.
        fprintf (f, "So: the relative budget is a number to spend. A function approximation "
                 "(%s%s%s%s, a reciprocal or square root) whose own relative "
                 "error is up to %g (rtol / 10, about %.0f correct bits of a float's 24) passes with "
                 "a tenfold margin where its result reaches the output without cancelling; "
                 "libm's accuracy (about 1e-7) is %.0f times tighter than that, so a shorter "
                 "polynomial or a table with a short series stays within it; %s",
                 *fm.names ? "this task's " : "",
                 fm.names, *fm.names ? ", or any other: " : "", s_others (fm.names, others,
                                                                       sizeof others), rtol / 10,
                 -log2 (rtol / 10), rtol / 10 / 1e-7, s_estimates (rtol / 10));
        if (sums)
            fputs (". A reordered summation is fine too", f);
    }
    fprintf (f, "; lower-precision storage or accumulation that moves results by about %g or "
             "more, or that fails on more than %g%% of elements, is not. Results need not be "
             "bit-identical.\n", rtol, 100 * (1 - match));
    //  Round 13: GELU's negative tail, x times 1 + erf(x / sqrt 2) where
    //  that sum cancels, needs erfc; nothing said so.
    if (!no_math)
        fprintf (f, "The relative test holds for small outputs too, down to the absolute "
                 "bound: where a factor of the result is a difference of nearly equal numbers "
                 "(1 + erf(x) for x well below 0, e^x - 1 near 0), compute that factor "
                 "directly (erfc(-x), expm1(x)), or its rounding error becomes a large "
                 "relative one.");
    //  Round 20: root * tanh(b) + 0.5 * a has terms of either sign, and
    //  nothing said that an approximation's error in one term is judged
    //  against their sum.
    //  Round 35: not for a product whose epilogue calls no function
    //  (clamp(a @ w + bias)): its terms are no approximations.
    //  Round 46: only a sum with a call among its terms, or a row's sum
    //  of calls' results: a * rsqrt(1 + a * a) * exp(-b * b / 2) was told
    //  of cancelling terms, tanh(x @ w / s).sum(dim=1), whose row sums
    //  of both signs come near zero, was not.
    bool adds = read && kf_prompt_formula_sums_calls (&fm);
    if (adds && n == 1 && s_one_sign (f, output_range, rtol, atol))
        adds = false;
    if (adds)
        fputs (" The same holds where this task adds terms that can have opposite signs: an "
               "error in one term counts against their sum, which is small where they nearly "
               "cancel, so spend less of the budget on a term's approximation than its own "
               "size would allow (check it on the inputs where the terms cancel).", f);
    //  Round 31: that gave no number (x * sigmoid(1.702 x) + 0.1 sin(3 x)
    //  crosses zero with each term near 0.05): there the absolute bound
    //  decides.
    if (adds && n == 1 && atol > 0)
        fprintf (f, " In numbers: where the sum is near zero an element passes on the absolute "
                 "bound, and a term of size T computed to relative error e is off by about e x "
                 "T there, so e must stay below %g / T (%g for a term of size 0.1, %g for one "
                 "of size 1); elements that fail both tests count against the %g%% allowed to "
                 "fail.", atol, atol / 0.1, atol, 100 * (1 - match));
    if (adds && n == 1 && rtol > 0 && match < 1 && !*fm.row)
        s_near_zero (f, output_range, rtol, match);
    if (kf_prompt_task_class (spec) == KF_CLASS_SCAN && rtol > 0 && match < 1)
        s_scan_budget (f, spec, rtol, match);
    fputs ("\n", f);
}

json_t *
kf_prompt_manifest (kf_db_t *db, int64_t run_id)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) run_id);
    const char *params[1] = { id };
    json_t *row = kf_db_row (db, "SELECT ref_data->'tensors' AS t FROM runs WHERE id = $1", 1,
                             params, NULL);
    json_t *manifest = json_incref (json_object_get (row, "t"));
    json_decref (row);
    return manifest;
}

json_t *
kf_prompt_output_range (json_t *manifest)
{
    json_t *range = NULL;
    size_t i;
    json_t *e;
    json_array_foreach (manifest, i, e) {
        json_t *st = json_object_get (e, "stats");
        if (strcmp (kf_jstr (e, "role"), "output"))
            continue;
        if (!kf_jhas_num (st, "min") || !kf_jhas_num (st, "max")) {
            json_decref (range);   // an output unsummarised: no range
            range = NULL;
            break;
        }
        double lo = kf_jnum (st, "min", 0), hi = kf_jnum (st, "max", 0);
        if (range) {
            lo = fmin (lo, kf_jnum (range, "min", 0));
            hi = fmax (hi, kf_jnum (range, "max", 0));
        }
        //  Round 48: one output's spread, for the share of its elements
        //  near zero (s_near_zero): the first exported set's, where every
        //  set has that one output (round 49: the second set's entry
        //  dropped it).
        json_t *spread = NULL;
        if (!range && kf_jhas_num (st, "std") && kf_jhas_num (st, "mean"))
            spread = json_pack ("{s:f, s:f, s:I}", "mean", kf_jnum (st, "mean", 0), "std",
                                kf_jnum (st, "std", 0), "index", kf_jint (e, "index"));
        else if (range && json_is_number (json_object_get (range, "std"))
                 && kf_jint (range, "index") == kf_jint (e, "index"))
            spread = json_pack ("{s:O, s:O, s:O}", "mean", json_object_get (range, "mean"), "std",
                                json_object_get (range, "std"), "index",
                                json_object_get (range, "index"));
        json_decref (range);
        range = json_pack ("{s:f, s:f}", "min", lo, "max", hi);
        if (spread)
            json_object_update (range, spread);
        json_decref (spread);
    }
    return range;
}

json_t *
kf_prompt_input_stats (json_t *manifest)
{
    json_t *out = json_array ();
    bool any = false;
    static const char *const roles[] = { "input", "param", "buffer" };
    for (size_t r = 0; r < 3; r++) {
        size_t i;
        json_t *e;
        json_array_foreach (manifest, i, e) {
            json_t *set = json_object_get (e, "set");
            if (strcmp (kf_jstr (e, "role"), roles[r]) || (json_is_integer (set)
                                                           && json_integer_value (set) != 0))
                continue;
            json_t *st = json_object_get (e, "stats");
            any |= json_is_object (st);
            json_array_append (out, json_is_object (st) ? st : json_null ());
        }
    }
    if (!any) {
        json_decref (out);
        return NULL;
    }
    return out;
}

void
kf_prompt_host_call_facts (FILE *f)
{
    //  Round 4: a model guessed both (outputs: the judge poisons them
    //  before every call, kf_host_timing.c; the stack: kf_runner.c calls
    //  kf_forward on its process's main thread and sets no RLIMIT_STACK).
    fputs ("Outputs are written by the judge before every call (a NaN pattern, so a stale "
           "result is caught), so their pages are resident when kf_forward starts, though "
           "flushed from the caches: unlike fresh memory, storing to them faults no zero "
           "pages in. kf_forward runs "
           "on the main thread of the candidate's own process, whose stack is the exec "
           "host's stack limit (RLIMIT_STACK, which the runner leaves as it is: 8 MiB on a "
           "default Linux); threads you start get glibc's default stack of the same size (2 "
           "MiB when that limit is unlimited). A few hundred KiB on either stack is safe; "
           "larger buffers belong in ctx->scratch_alloc.\n", f);
    //  Round 6: a kernel that started its threads in every call kept a
    //  tile buffer on each thread's stack and ran 2x slower than with the
    //  buffer elsewhere. glibc keeps an exited thread's stack for the next
    //  thread but gives its pages back (madvise MADV_DONTNEED): a 4 MiB
    //  stack buffer took 1020 page faults in every call's new thread here,
    //  none on the calling thread after the first call. Scratch blocks
    //  keep their pages too (kf_scratch.h, round 20).
    fputs ("A thread's stack is released when the thread exits: glibc may reuse the "
           "mapping for the next thread, but hands its pages back to the kernel, so a large "
           "buffer on the stack of a thread created in each call is faulted in again "
           "(zero-filled, one page fault per 4 KiB) on every call; measured here, such a "
           "kernel ran 2x slower. Keep large per-thread buffers where their pages stay "
           "resident from one call to the next: on the calling thread's stack (kf_forward's "
           "own), in blocks kf_forward takes from ctx->scratch_alloc and hands to the "
           "threads, or in a static scratch buffer allocated once and reused (scratch only: "
           "no results kept between calls).\n", f);
    //  Round 21: whether starting more threads than CPUs, to win CPU time
    //  from a busy host's other work, is allowed or gaming was asked.
    fputs ("Threads beyond the CPUs the kernel may use (the Target section's count) are "
           "allowed, and share those CPUs by time slices: on a busy host more threads can take "
           "CPU time from other processes, and every timing says the load it saw. As a rule "
           "start one thread a CPU; more pay only while other work takes CPU time, and a "
           "kernel that starts more is compared with others under like load.\n", f);
}

void
kf_prompt_host_strides (FILE *f, json_t *spec)
{
    kf_task_class_t c = kf_prompt_task_class (spec);
    if (c != KF_CLASS_MATMUL && c != KF_CLASS_ATTENTION)
        return;
    const char *lists[2] = { "inputs", "outputs" };
    int named = 0;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *t;
        json_array_foreach (json_object_get (spec, lists[l]), i, t) {
            json_t *shape = json_object_get (t, "shape");
            size_t dims = json_array_size (shape);
            long long cols = dims >= 2 ? json_integer_value (json_array_get (shape, dims - 1)) : 0;
            long long rows = dims >= 2 ? json_integer_value (json_array_get (shape, dims - 2)) : 0;
            long long size = (long long) kf_dtype_size (kf_dtype_from_name (kf_jstr (t,
                                                                                  "dtype")));
            long long bytes = cols * size;
            if (cols <= 0 || rows < 16 || !kf_prompt_stride_aliases (bytes))
                continue;
            fprintf (f, named++ ? ", %s's %lld" : "Row strides: %s's rows are %lld bytes long",
                     kf_jstr (t, "name"), bytes);
        }
    }
    if (!named)
        return;
    fprintf (f, ", %s of 4096 bytes. An x86 L1 data cache of 64 sets (32 "
             "KiB 8-way, 48 KiB 12-way) picks a line's set by address bits 6-11, so one column "
             "of successive rows falls in a single set: a loop that walks down a column, or a "
             "block that keeps more rows in use at once than the cache has ways (8-12), evicts "
             "its own lines, and a load 4096 bytes from a recent store can wait on that store "
             "(4K aliasing). The hardware prefetchers do not cross a 4 KiB page, so a walk "
             "that takes one line from each such row gets no prefetch either; and L2 picks its "
             "set by more bits, yet such a column still uses a fraction of its sets (1 in 64 "
             "where L2 has 1024 sets of 64-byte lines). Walk such a tensor along its rows, or "
             "copy the block you reuse into a contiguous panel once.\n",
             named == 1 ? "a multiple" : "multiples");
}
