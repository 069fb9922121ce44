/*  kf_prompt_standing.c - where the search stands, in the generation
 *  prompt (kf_prompt_standing.h): the kernel to improve, the best kernel,
 *  the attempts from the kernel to improve, the last kernel tried and the
 *  inspirations, each with the figures its evaluation measured.
 */
#include "kf_prompt_standing.h"
#include "kf_prompt_class.h"
#include "kf_prompt_diff.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_slim.h"
#include "kf_prompt_target.h"
#include "kf_prompt_tune.h"
#include "kf_retune.h"
#include "kf_task.h"
#include "kf_tune.h"
#include "kf_json.h"
#include "kf_msg_eval.h"
#include "kf_descriptor_text.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  A kernel's figures

//  The kernel's runtime as it was measured: "runtime 12.3 us (reference
//  45.6 us, 3.71x)", or what kept it from being timed.
static void
s_runtime_line (FILE *f, json_t *k)
{
    char a[32], b[32];
    const char *status = kf_jstr (k, "status");
    if (kf_jhas_num (k, "candidate_ns")) {
        fprintf (f, "Runtime: %s",
                 kf_prompt_time_text (kf_jnum (k, "candidate_ns", 0), a, sizeof a));
        if (kf_jhas_num (k, "reference_ns"))
            fprintf (f, " (reference %s",
                     kf_prompt_time_text (kf_jnum (k, "reference_ns", 0), b, sizeof b));
        if (kf_jhas_num (k, "speedup"))
            fprintf (f, "%s%.3fx the reference's speed", kf_jhas_num (k, "reference_ns")
                                                                ? "; " : " (",
                     kf_jnum (k, "speedup", 0));
        if (kf_jhas_num (k, "reference_ns") || kf_jhas_num (k, "speedup"))
            fputs (")", f);
        //  Which protocol and machine the figure is from: a screen and a
        //  full timing, or two workers, are not the same measurement.
        const char *fid = kf_jstr (k, "fidelity");
        const char *worker = kf_jstr (k, "worker");
        const char *how = !strcmp (fid, "screen") ? "screen timing"
                        : !strcmp (fid, "pending") ? "screen timing, the full one pending"
                        : *fid ? "full protocol" : "";
        if (*how || *worker)
            fprintf (f, " [%s%s%s%s]", how, *how && *worker ? ", " : "", *worker ? "on " : "",
                     worker);
        fputs ("\n", f);
    }
    else if (kf_jhas_num (k, "speedup"))
        fprintf (f, "Speedup: %.3fx the reference\n", kf_jnum (k, "speedup", 0));
    else if (*status)
        fprintf (f, "Runtime: not measured (%s)\n", status);
}

//  A swept kernel's code keeps its own defaults, and its figure is the
//  point that won: name that point, or a reader credits the defaults.
static void
s_swept_line (FILE *f, json_t *k)
{
    json_t *configs = json_object_get (k, "configs");
    if (json_array_size (configs) < 2)
        return;
    //  The point whose figure the kernel has: the full protocol's first
    //  (kf_retune_winner), as the retuning round takes it.
    json_t *won = kf_retune_winner (configs);
    char label[256], both[1024];
    if (!won || !kf_tune_params_label (json_object_get (won, "params"), label, sizeof label)
        || !*label)
        return;
    fprintf (f, "Swept over %zu points: its figure is the point %s; the code below shows its "
             "own defaults.", json_array_size (configs), label);
    if (kf_retune_combination (configs, both, sizeof both))
        fprintf (f, " %s", both);
    fputs ("\n", f);
}

//  The largest absolute limit of SPEC's outputs (kf_task_atol by dtype):
//  an error above it passed on the relative limit, whatever the output.
static double
s_loosest_atol (json_t *spec)
{
    double atol = 0;
    size_t i;
    json_t *t;
    json_array_foreach (json_object_get (spec, "outputs"), i, t) {
        int dt = kf_dtype_from_name (kf_jstr (t, "dtype"));
        double a = kf_task_atol (spec, dt >= 0 ? dt : 0);   /* 0: f32 */
        if (a > atol)
            atol = a;
    }
    return json_array_size (json_object_get (spec, "outputs")) ? atol
                                                               : kf_task_atol (spec, 0);
}

//  With no operation count, the time per output element is what a model
//  can set against a cycle budget (round 4: "compute: not known" left it
//  to guess). On the host, also in cycles and flops one core could do in
//  them (round 9: "compute: not known" on every mish prompt, where the
//  limit of the kernel was compute).
static void
s_per_element (FILE *f, json_t *spec, json_t *k, json_t *hardware, bool host)
{
    long long mnk[3];
    json_t *compute = json_object_get (k, "compute");
    if (!kf_jhas_num (k, "candidate_ns") || !(kf_jnum (k, "candidate_ns", 0) > 0)
        || kf_jnum (compute, "flops", 0) > 0 || kf_prompt_product_flops (spec, mnk) > 0)
        return;
    double elements = 0;
    size_t i, d;
    json_t *t, *dim;
    json_array_foreach (json_object_get (spec, "outputs"), i, t) {
        double n = 1;
        json_array_foreach (json_object_get (t, "shape"), d, dim)
            n *= (double) json_integer_value (dim);
        elements += n;
    }
    if (!(elements > 0))
        return;
    double ns = kf_jnum (k, "candidate_ns", 0) / elements;
    fprintf (f, "Per output element: %.3g ns (%.0f output elements at the main shape)", ns,
             elements);
    if (kf_jhas_num (k, "reference_ns") && kf_jnum (k, "reference_ns", 0) > 0)
        fprintf (f, "; the reference %.3g ns", kf_jnum (k, "reference_ns", 0) / elements);
    json_t *dev = json_array_get (json_object_get (hardware, "devices"), 0);
    double mhz = kf_jnum (dev, "clock_mhz_measured", 0);
    double peak = kf_jnum (dev, "peak_gflops_one_core", 0);
    if (host && mhz > 0) {
        fprintf (f, ". That is %.3g cycles an element at the measured clock (%.0f MHz)",
                 ns * mhz * 1e-3, mhz);
        if (peak > 0)
            fprintf (f, ", time in which one core at its measured FMA peak does %.0f f32 flops "
                     "(all cores together, that many times their number): set the operations "
                     "an element costs against that", ns * peak);
    }
    fputs (".\n", f);
}

//  What the evaluation said about a kernel that was not correct, with its
//  figures, and the profile of one that was timed.
static void
s_figures (FILE *f, const kf_prompt_in_t *in, json_t *k)
{
    json_t *c = json_object_get (k, "correctness");
    if (*kf_jstr (k, "detail"))
        fprintf (f, "Verdict: %s: %s\n", *kf_jstr (k, "status") ? kf_jstr (k, "status") : "?",
                 kf_jstr (k, "detail"));
    else if (*kf_jstr (k, "status"))
        fprintf (f, "Verdict: %s\n", kf_jstr (k, "status"));
    if (json_is_object (c)) {
        fputs (strcmp (kf_jstr (k, "status"), "correct")
                   ? "Correctness figures (worst over the input sets):"
                   : "Accuracy (worst over the input sets; the limits are above):", f);
        if (kf_jhas_num (c, "match_fraction"))
            fprintf (f, " %.4f%% of elements within tolerance;",
                     100.0 * kf_jnum (c, "match_fraction", 0));
        //  A correct kernel's worst error of one kind may exceed that
        //  kind's limit: the element passed on the other limit (the
        //  evaluator's rule, kf_eval_elem.h: rel < rtol or abs <= atol).
        //  Say so, or the figures read as a contradiction (round 3).
        bool correct = !strcmp (kf_jstr (k, "status"), "correct"), either = false;
        double rel, rtol = kf_jnum (json_object_get (in->spec, "tolerance"), "rtol", 1e-2);
        double atol = s_loosest_atol (in->spec);
        if (kf_jhas_num (c, "max_abs_err")) {
            fprintf (f, " max abs error %.3g", kf_jnum (c, "max_abs_err", 0));
            if (correct && kf_jnum (c, "max_abs_err", 0) > atol) {
                fprintf (f, " (above the absolute limit %g only where the relative error is "
                         "below %g: those elements pass on the relative limit)", atol, rtol);
                either = true;
            }
            fputs (";", f);
        }
        //  Round 49: the evaluator writes an infinite relative error (a
        //  reference exactly 0 where the kernel's output is not) as
        //  KF_EVAL_ERR_INFINITE.
        if (kf_jnum (c, "max_rel_err", 0) >= KF_EVAL_ERR_INFINITE_AT)
            fprintf (f, " max rel error infinite (the reference is exactly 0 where this output "
                     "is not%s);", correct ? ": those elements pass on the absolute limit" : "");
        else if (kf_jhas_num (c, "max_rel_err")) {
            fprintf (f, " max rel error %.3g", kf_jnum (c, "max_rel_err", 0));
            if (correct && kf_jnum (c, "max_rel_err", 0) >= rtol) {
                fprintf (f, " (above the relative limit %g only where the reference is near "
                         "zero: those elements pass on the absolute limit)", rtol);
                either = true;
            }
            //  Round 17: the room left, as a factor (the parent at 1.1e-6).
            else if (correct && (rel = kf_jnum (c, "max_rel_err", 0)) > 0 && rel * 10 <= rtol) {
                //  Round 47: "room to spend on cheaper math" of row sums of
                //  tanh that come near zero, whose error counts against
                //  the sum (What counts as correct).
                kf_formula_t fm;
                fprintf (f, " (%.0f times below the relative limit %g: %s)", rtol / rel, rtol,
                         kf_prompt_formula (in->spec, &fm) && kf_prompt_formula_sums_calls (&fm)
                             ? "room for cheaper math only where the terms' sums stay far "
                               "from zero, as the error counts against the sum"
                             : "room to spend on cheaper math");
            }
            fputs (";", f);
        }
        if (either)
            fprintf (f, " an element passes when |got - want| / |want| < %g or |got - want| <= "
                     "%g, either one sufficing;", rtol, atol);
        if (kf_jhas_num (c, "cosine"))
            fprintf (f, " cosine similarity %.6f;", kf_jnum (c, "cosine", 0));
        if (kf_jhas_num (c, "nonfinite_mismatch") && kf_jnum (c, "nonfinite_mismatch", 0) > 0)
            fprintf (f, " %.0f NaN/Inf where the reference has none;",
                     kf_jnum (c, "nonfinite_mismatch", 0));
        fputs ("\n", f);
    }
    kf_prompt_position_line (f, k, in->spec, in->hardware,
                             kf_prompt_target_kind (in->target, in->language));
    s_per_element (f, in->spec, k, in->hardware,
                   kf_prompt_target_kind (in->target, in->language) == KF_TARGET_HOST);
    if (!strcmp (kf_jstr (k, "status"), "correct"))
        kf_prompt_noise_line (f, k);
    //  A profile job's summary (kf_prompt_kernel), named by its profiler.
    const char *profile = kf_jstr (k, "profile");
    if (*profile)
        fprintf (f, "Profile (%s):\n%s%s",
                 !strcmp (kf_jstr (k, "profiler"), "perf") ? "perf stat"
                                                            : "Nsight Compute",
                 profile, profile[strlen (profile) - 1] == '\n' ? "" : "\n");
}

//  ---------------------------------------------------------------------
//  Where the search stands

static int64_t
s_id (json_t *k)
{
    return k ? kf_jint (k, "id") : 0;
}

//  Whether A and B are one kernel: the same candidate, or the same source
//  once comments and spacing are removed (kf_lineage_norm_hash).
static bool
s_same (json_t *a, json_t *b)
{
    if (!a || !b)
        return false;
    if (s_id (a) && s_id (a) == s_id (b))
        return true;
    const char *x = kf_jstr (a, "norm_hash"), *y = kf_jstr (b, "norm_hash");
    return *x && !strcmp (x, y);
}

//  Round 24: whether inspiration I of LIST is one listed before it.
static bool
s_same_before (json_t *list, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (s_same (json_array_get (list, j), json_array_get (list, i)))
            return true;
    return false;
}

//  Round 24: every kernel shown with code, so a later one can be its diff
//  against any of them (the last try and the inspirations too), at most
//  the kernel to improve, the best, the last try and the inspirations
//  (an earlier run's on top).
#define S_SHOWN_MAX (3 + KF_PROMPT_MAX_INSPIRATIONS + 4)
static void
s_show (kf_prompt_shown_t *shown, int *n, json_t *k, const char *name)
{
    if (*n < S_SHOWN_MAX && *kf_jstr (k, "source"))
        shown[(*n)++] = (kf_prompt_shown_t) { kf_jstr (k, "source"), (long long) s_id (k), name };
}

//  A kernel shown with its figures and code.
//  The first line of the vectoriser's summary that the compile worker
//  adds to a built kernel's log (KF_COMPILE_VEC_MARK of
//  compile-worker/kf_compile.h; test_prompt_round5 holds the two equal),
//  and the first words of its register-spill report, which follows it
//  (KF_COMPILE_SPILL_MARK; test_compile_spill holds those equal).
#define S_VEC_MARK "Compiler report (GCC's vectoriser, -fopt-info-vec, on this build):"
#define S_SPILL_MARK "Compiler report (register spills, objdump -d of this build):"
#define S_VEC_MAX 1800
#define S_SPILL_MAX 1000

//  Where the compiler's reports start in LOG (its end when it has none).
static const char *
s_reports (const char *log)
{
    const char *vec = strstr (log, S_VEC_MARK), *spill = strstr (log, S_SPILL_MARK);
    const char *at = vec && (!spill || vec < spill) ? vec : spill;
    return at ? at : log + strlen (log);
}

//  K's log without the compiler's reports (caller frees).
static char *
s_log_head (json_t *k)
{
    const char *log = kf_jstr (k, "log");
    size_t n = (size_t) (s_reports (log) - log);
    while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
        n--;
    return strndup (log, n);
}

//  "Compiler report for WHOM" and the rest of the report at AT, N bytes
//  at most MAX, cut on a whole line, control characters and backquotes
//  replaced (the report quotes the candidate's code).
static void
s_report_part (FILE *f, const char *at, size_t n, size_t max, const char *whom)
{
    const char *rest = at + strlen ("Compiler report");
    n -= strlen ("Compiler report");
    if (n > max) {
        n = max;
        while (n > 0 && rest[n - 1] != '\n')
            n--;
    }
    fprintf (f, "Compiler report for %s", whom);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) rest[i];
        fputc (c == '\n' ? '\n' : c < 0x20 || c == 0x7f || c == '`' ? ' ' : c, f);
    }
    if (n && rest[n - 1] != '\n')
        fputc ('\n', f);
}

//  "Compiler report for WHOM (...): 2 loops vectorised, 1 not." and its
//  loop lines, from K's log (round 5: the model guessed what the compiler
//  did with the parent), cut at S_VEC_MAX bytes; then the functions that
//  spill vector registers, if any (issue 15: the model could not see that
//  a register tile was too large for the registers).
static void
s_compiler_report (FILE *f, json_t *k, const char *whom)
{
    const char *log = kf_jstr (k, "log");
    const char *vec = strstr (log, S_VEC_MARK), *spill = strstr (log, S_SPILL_MARK);
    if (vec) {
        size_t n = spill && spill > vec ? (size_t) (spill - vec) : strlen (vec);
        s_report_part (f, vec, n, S_VEC_MAX, whom);
    }
    bool spill_lines = false;
    if (spill) {
        size_t n = vec && vec > spill ? (size_t) (vec - spill) : strlen (spill);
        s_report_part (f, spill, n, S_SPILL_MAX, whom);
        spill_lines = memmem (spill, n, " at line", 8) != NULL;     /* " at lines 40-59" too */
    }
    //  Both reports name lines: the vectoriser's loops, the spills'
    //  moves (round 28: a spill count without a place could not be used).
    if (vec || spill_lines)
        fputs ("(Line numbers are of its source as shown.)\n", f);
}

static void
s_kernel (FILE *f, const kf_prompt_in_t *in, const char *language, json_t *k, bool code)
{
    s_runtime_line (f, k);
    s_swept_line (f, k);
    s_figures (f, in, k);
    if (k == in->base)
        s_compiler_report (f, k, "the parent");
    if (code && *kf_jstr (k, "source"))
        kf_prompt_code_block (f, language, kf_jstr (k, "source"));
}

//  Whether IN's inspirations hold kernel ID as the one that does the idea.
static bool
s_offered_shown (const kf_prompt_in_t *in, int64_t id)
{
    for (size_t i = 0; i < json_array_size (in->inspirations); i++) {
        json_t *k = json_array_get (in->inspirations, i);
        if (s_id (k) == id && json_is_true (json_object_get (k, "does_idea")))
            return true;
    }
    return false;
}

//  Round 20: where the plan moved this attempt off the kernel the
//  archive chose (kf_search_idea_choose's "moved"), why ("Chosen from
//  the archive" gave no reason, and the model read the move as chance).
static void
s_moved (FILE *f, const kf_prompt_in_t *in)
{
    json_t *m = json_object_get (in->ideas, "moved");
    if (!m)
        return;
    //  Round 22: the one reason that held (kf_search_idea_choose's "why"),
    //  not three joined by "or".
    static const struct {
        const char *why, *text;
    } reasons[] = {
        { "code", "that kernel's code does this attempt's idea already" },
        { "built", "that kernel was written to this attempt's idea" },
        { "cited", "this attempt's idea was written from that kernel's code (its words name "
                   "that kernel)" },
        { "inherited", "that kernel descends from one written to this attempt's idea" },
        { "tried", "a try of this idea from that kernel was judged already: a second one "
                   "from it would ask the same question" },
        { "threads", "threads are predicted to lose on that kernel (its time a call is below "
                     "what starting them costs to win back)" },
        { "scalar", "this attempt's idea takes vectorised math as given, and that kernel's "
                    "math is scalar (no explicit SIMD, and the compiler vectorised none of its "
                    "loops)" },
        { "arith", "that kernel's time is its arithmetic (its cycles a vector, timed, were half "
                   "as many again as the Target section's memory budget or more), and "
                   "streaming stores save memory time only" },
        { "sibling", "a sibling of this generation takes this idea from that kernel" },
        { "converges", "this idea on that kernel would make the kernel another attempt in "
                       "flight is making already (the same features, or the two ideas "
                       "crossed: each added to a kernel that has the other)" },
    };
    const char *why = kf_jstr (m, "why"), *text = NULL;
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (!strcmp (why, reasons[i].why))
            text = reasons[i].text;
    //  Round 25's notes: an idea whose text builds on a feature ("inside
    //  the cache blocks") moved off a kernel without it: which feature.
    unsigned lacks = (unsigned) kf_jint (m, "lacks");
    char words[KF_PROMPT_FEATURE_WORDS_MAX], premise[KF_PROMPT_FEATURE_WORDS_MAX + 160];
    if (!strcmp (why, "premise") && lacks) {
        kf_prompt_feature_words (lacks & ~KF_PREMISE_VECTORS, words, sizeof words);
        bool several = lacks & (lacks - 1);
        snprintf (premise, sizeof premise, "this attempt's idea takes %s%s%s as given (its "
                  "words build on %s), and that kernel's code does %s", words,
                  *words && lacks & KF_PREMISE_VECTORS ? " and " : "",
                  lacks & KF_PREMISE_VECTORS ? "vectorised math" : "", several ? "them" : "it",
                  several ? "none of them" : "not have it");
        text = premise;
    }
    fprintf (f, "The archive offered candidate %lld for this attempt; %s, so the attempt "
             "starts from this kernel instead%s.\n", (long long) kf_jint (m, "from"),
             text ? text
                  : "the planner moved this idea to a kernel of the pool that lacks it",
             s_offered_shown (in, kf_jint (m, "from"))
                 ? " (its code is shown below)" : "");
}

//  What the search has: the kernel to improve, whole, then the fastest
//  kernel it holds (marked when it does not count yet), then what was
//  tried from the kernel to improve. Round 21: the best came first and
//  whole beside a kernel to improve sharing 80% of its lines (60-77 KB
//  prompts); the kernel to improve now comes first, so the best can be
//  its diff against it, and every later kernel the shorter diff against
//  either (SHOWN, kf_prompt_diff.h), whole only where no diff is shorter.
void
kf_prompt_standing (FILE *f, const kf_prompt_in_t *in, const char *language)
{
    json_t *base = in->base && *kf_jstr (in->base, "source") ? in->base : NULL;
    json_t *best = in->best && *kf_jstr (in->best, "source") ? in->best : NULL;
    bool base_is_best = best ? base && s_id (base) == s_id (best) : in->base_is_best;
    const char *standing = best ? kf_jstr (best, "standing") : "";
    char mark[200] = "";
    if (*standing && strcmp (standing, "counted"))
        snprintf (mark, sizeof mark, " (%s: its figure is not confirmed yet, so it is not the "
                  "run's reported result)", standing);
    kf_prompt_shown_t shown[S_SHOWN_MAX];
    int n_shown = 0;
    if (base) {
        if (base_is_best)
            fprintf (f, "\n## Kernel to improve: the best kernel so far (candidate %lld)%s\n",
                     (long long) s_id (base), best ? mark : "");
        else if (json_object_get (in->ideas, "moved"))
            fprintf (f, "\n## Kernel to improve (candidate %lld)\nIt is not the fastest "
                     "kernel found so far.\n", (long long) s_id (base));
        else
            fprintf (f, "\n## Kernel to improve (candidate %lld)\nChosen from the archive of "
                     "distinct approaches for this attempt; it is not the fastest kernel "
                     "found so far.\n", (long long) s_id (base));
        s_moved (f, in);
        s_kernel (f, in, language, base, true);
        s_show (shown, &n_shown, base, "the kernel to improve");
    }
    if (best && !base_is_best) {
        fprintf (f, "\n## Best kernel so far (candidate %lld)%s\nThe fastest correct kernel "
                 "the search holds; shown for reference", (long long) s_id (best), mark);
        if (base)
            fprintf (f, ": the kernel to change is the kernel to improve above (candidate "
                     "%lld), not this one", (long long) s_id (base));
        fputs (".\n", f);
        if (!kf_prompt_best_named (f, in, best, language)) {
            s_kernel (f, in, language, best, false);
            kf_prompt_code_or_diff (f, language, kf_jstr (best, "source"), shown, n_shown,
                                    "The best kernel");
            s_show (shown, &n_shown, best, "the best kernel so far");
        }
    }
    //  A tuning prompt keeps the parent's structure: what was tried from
    //  it is one verdict line each, no other kernel's code (round 11).
    if (in->templated)
        kf_prompt_tune_tried (f, in);
    size_t n_children = json_array_size (in->children);
    if (base && n_children && !in->templated) {
        fprintf (f, "\n## Recent attempts from the kernel to improve (candidate %lld)\nIts last "
                 "%zu children, newest first; do not repeat what failed or regressed.\n",
                 (long long) s_id (base), n_children);
        size_t i;
        json_t *c;
        json_array_foreach (in->children, i, c)
            fprintf (f, "- candidate %lld (generation %lld): %s\n", (long long) s_id (c),
                     (long long) kf_jint (c, "generation"), kf_jstr (c, "reason"));
    }
    if (in->last && !in->templated) {
        fprintf (f, "\n## Last kernel tried from the kernel to improve (candidate %lld)\n",
                 (long long) s_id (in->last));
        s_runtime_line (f, in->last);
        s_figures (f, in, in->last);
        char *log = s_log_head (in->last);
        if (log && *log) {
            fputs ("Log:\n", f);
            kf_prompt_code_block (f, "text", log);
        }
        free (log);
        s_compiler_report (f, in->last, "it");
        if (s_same (in->last, base) || s_same (in->last, best))
            fputs ("(It is the kernel above.)\n", f);
        else if (*kf_jstr (in->last, "source")) {
            kf_prompt_code_or_diff (f, language, kf_jstr (in->last, "source"), shown, n_shown,
                                    "It");
            s_show (shown, &n_shown, in->last, "the last kernel tried");
        }
    }
    //  Inspirations not shown above already.
    char names[S_SHOWN_MAX][32];
    int listed = 0;
    size_t n_insp = json_array_size (in->inspirations);
    for (size_t i = 0; i < n_insp; i++) {
        json_t *k = json_array_get (in->inspirations, i);
        //  A kernel remembered from an earlier run (kf_memory.h) comes on
        //  top of the run's own inspirations.
        int64_t from_run = kf_jint (k, "from_run");
        if ((!from_run && listed >= KF_PROMPT_MAX_INSPIRATIONS) || s_same (k, base)
            || s_same (k, best) || s_same (k, in->last) || s_same_before (in->inspirations, i))
            continue;
        if (!listed)
            fputs ("\n## Inspirations\nCorrect kernels that took other approaches (other cells "
                   "of the archive); borrow what helps.\n", f);
        //  The axes in the target's words (round 4: "sync" here,
        //  "threads" in the meta prompt for a host run).
        char cell[256];
        if (*kf_jstr (k, "coords"))
            fprintf (f, "\n### Inspiration %d, of the archive's cell %s\n", ++listed,
                     kf_descriptor_cell_text (in->target, kf_jstr (k, "coords"), cell, sizeof cell));
        else
            fprintf (f, "\n### Inspiration %d\n", ++listed);
        //  Round 39: the kernel the plan moved this attempt off, since
        //  it does the idea already: its code is how the idea was done.
        if (json_is_true (json_object_get (k, "does_idea")))
            fprintf (f, "Candidate %lld, the kernel the archive offered, does this attempt's "
                     "idea already: its code below is how it was done here; take what serves "
                     "the kernel to improve.\n", (long long) s_id (k));
        if (from_run)
            fprintf (f, "From an earlier run (run %lld, candidate %lld) of this op on this "
                     "target: %.3fx there, against that run's own timing of the reference, "
                     "so not a figure of this run; not this run's best, shown for its "
                     "ideas only.\n", (long long) from_run, (long long) s_id (k),
                     kf_jnum (k, "from_run_speedup", 0));
        if (kf_prompt_inspiration_named (f, in, k, language))
            continue;
        s_runtime_line (f, k);
        s_swept_line (f, k);
        kf_prompt_inspiration_behind (f, in, k);
        kf_prompt_code_or_diff (f, language, kf_jstr (k, "source"), shown, n_shown,
                                "This kernel");
        snprintf (names[n_shown % S_SHOWN_MAX], sizeof names[0], "inspiration %d", listed);
        s_show (shown, &n_shown, k, names[n_shown % S_SHOWN_MAX]);
    }
}
