/*  kf_meta_prompt.c - the meta-prompter's prompt and the history of its
 *  edits (kf_meta_prompt.h).
 */
#include "kf_meta_prompt.h"
#include "kf_prompt_threads.h"
#include "kf_descriptor.h"
#include "kf_json.h"
#include "kf_text.h"
#include "kf_prompt.h"
#include "kf_meta_code.h"
#include "kf_meta_edits.h"
#include "kf_meta_guess.h"
#include "kf_prompt_layout.h"
#include "kf_meta_ideas.h"
#include "kf_lineage.h"
#include "kf_meta_score.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_epilogue.h"
#include "kf_prompt_facts.h"
#include "kf_prompt_history.h"
#include "kf_prompt_target.h"
#include "kf_tune.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



//  "{1,2,0}" with each axis named and each level in the target's words.
static void
s_coords (FILE *f, const char *text, const char *language)
{
    int c[3];
    if (sscanf (text, "{%d,%d,%d}", &c[0], &c[1], &c[2]) != 3) {
        fprintf (f, "; coordinates %s", text);
        return;
    }
    fprintf (f, "; coordinates %s (", text);
    for (int d = 0; d < 3; d++)
        fprintf (f, "%s%s %d: %s", d ? ", " : "", kf_descriptor_dim_name_for (language, d), c[d],
                 kf_descriptor_level_name_for (language, d, c[d]));
    fputc (')', f);
}

//  What the coordinates are, once, with every level's name.
static void
s_axes (FILE *f, const char *language)
{
    fprintf (f, "Coordinates are the kernel's cell in the archive of distinct approaches, "
             "{memory, algorithm, %s} below, each level 0 to 3, read from its source:",
             language && !strcmp (language, "c") ? "threads" : "synchronisation");
    for (int d = 0; d < 3; d++) {
        fprintf (f, "\n  %d. %s:", d + 1, kf_descriptor_dim_name_for (language, d));
        for (int l = 0; l < 4; l++)
            fprintf (f, "%s %d %s", l ? "," : "", l, kf_descriptor_level_name_for (language, d, l));
    }
    fputs ("\n", f);
}

int
kf_meta_word_cut (const char *text, int len, int max)
{
    if (len <= max)
        return len < 0 ? 0 : len;
    if (max <= 0)
        return 0;
    int n = max;
    //  Back to the blank before the word the cut falls in, when one is in
    //  the second half (a single long word is cut inside it).
    int blank = n;
    while (blank > max / 2 && text[blank] != ' ' && text[blank] != '\t')
        blank--;
    if (blank > max / 2)
        n = blank;
    else
        while (n > 0 && ((unsigned char) text[n] & 0xC0) == 0x80)
            n--;   //  not inside a UTF-8 character
    while (n > 0 && strchr (" \t,;:(", text[n - 1]))
        n--;
    return n;
}

void
kf_meta_quote_cut (FILE *f, const char *text, int max)
{
    int len = (int) strcspn (text, "\n");
    int n = kf_meta_word_cut (text, len, max);
    fprintf (f, "%.*s%s", n, text, n < len || text[len] ? "..." : "");
}

//  The outcome's share of the measured peaks, as the kernel prompt gives
//  it, where the evaluation measured them (round 4: the kernel prompt had
//  "27% of the copy bandwidth", the meta prompt nothing).
//  Round 10: a matrix product's outcomes read "memory 2.2 GB/s = 3% of
//  the copy bandwidth" and nothing of compute, where the kernel prompts
//  derive 2*M*N*K from the shapes; the meta prompt now does the same (on
//  DEVICE's peaks, every core's and one core's).
//  An outcome's memory and compute figures against the device's.
static void
s_shares (FILE *f, json_t *o, json_t *spec, json_t *hardware, bool host)
{
    json_t *device = json_array_get (json_object_get (hardware, "devices"), 0);
    json_t *bw = json_object_get (o, "bandwidth"), *cp = json_object_get (o, "compute");
    double gf = kf_jnum (cp, "candidate_gflops", 0), peak = kf_jnum (cp, "peak_gflops", 0);
    double ns = kf_jnum (o, "candidate_ns", 0), derived = 0;
    long long mnk[3];
    json_t *ft = json_object_get (o, "features");
    //  Round 43: a kernel computing every output of x @ x.t() was set
    //  against the triangle's count; it counts the full product's.
    bool whole = json_is_integer (ft)
                 && kf_prompt_product_every_output (spec, NULL,
                                                    (unsigned) json_integer_value (ft));
    long long batch = 1;
    double all = whole && ns > 0 ? kf_prompt_matmul_count (spec, &batch, mnk) : 0;
    double top = kf_prompt_compute_ceiling (o, device);
    if (!(top > 0))
        top = peak;
    //  Past every core's peak, it computes a triangle the reading missed.
    if (whole && top > 0 && all / ns > top)
        whole = false;
    if (!(gf > 0) && ns > 0
        && (derived = whole ? all : kf_prompt_product_flops (spec, mnk)) > 0) {
        gf = derived / ns;
        if (!(peak > 0))
            peak = kf_jnum (device, "peak_gflops", 0);
    }
    //  The kernel prompts' one count (kf_prompt_memory_share): N + M
    //  against the copy figure, which counts its own bytes so; N + 2M,
    //  where its code has no streaming stores, against all cores' cold
    //  read rate (round 17: N + 2M was set against the copy, 90% where
    //  like for like said 68%).
    kf_stores_t stores = !host || !json_is_integer (ft) ? KF_STORES_UNKNOWN
                         : json_integer_value (ft) & (1 << KF_IDEA_STREAM) ? KF_STORES_STREAMING
                                                                             : KF_STORES_ORDINARY;
    kf_share_t copy = kf_prompt_memory_share (bw, spec, device, stores, KF_SHARE_COPY);
    kf_share_t cold = kf_prompt_memory_share (bw, spec, device, stores, KF_SHARE_ALL_CORES);
    if (copy.share > 0)
        fprintf (f, "; memory %.1f GB/s = %.0f%% of %s", copy.gbs, 100 * copy.share,
                 copy.rate_name);
    //  Round 18: the note stood on the others only, and a reader had to
    //  infer streaming stores from its absence.
    if (stores == KF_STORES_STREAMING && copy.share > 0)
        fputs ("; its code has streaming stores, so N + M is what crosses the bus", f);
    else if (cold.doubled && cold.gbs > 0) {
        fprintf (f, "; counting %s (its code has no streaming stores), %.1f GB/s", cold.traffic,
                 cold.gbs);
        if (cold.share > 0)
            fprintf (f, " = %.0f%% of %s (%.1f GB/s)", 100 * cold.share, cold.rate_name,
                     cold.rate);
    }
    if (gf > 0 && peak > 0)
        fprintf (f, "; compute %.1f GFLOP/s = %.0f%% of the measured peak", gf, 100 * gf / peak);
    double one_core = kf_jnum (device, "peak_gflops_one_core", 0);
    //  Round 20: "(72% of one core's)" of a two-thread kernel read as one
    //  core at 72%.
    if (gf > 0 && one_core > 0 && peak > one_core * 1.05)
        fprintf (f, " (%.0f%% of one core's peak, all its threads' work set against one core)",
                 100 * gf / one_core);
    //  Round 43: x @ x.t()'s triangle count read as "the product's
    //  2*M*N*K" beside a kernel that computed every output.
    if (derived > 0 && peak > 0 && whole)
        fputs (", counting the full product's 2*M*N*K from the shapes (the product is "
               "symmetric, but this kernel's loops walk no triangle as its code reads)", f);
    else if (derived > 0 && peak > 0 && kf_prompt_product_self (spec) && json_is_integer (ft)
             && (json_integer_value (ft) >> KF_IDEA_TRIANGLE) & 1)
        fputs (", counting the symmetric product's diagonal and one triangle from the shapes, "
               "the work of this kernel's loops (they walk one triangle as its code reads)", f);
    else if (derived > 0 && peak > 0 && kf_prompt_product_self (spec))
        fputs (", counting the symmetric product's diagonal and one triangle from the shapes "
               "(half the full product's 2*M*N*K: a kernel that computes every output runs at "
               "twice these figures)", f);
    else if (derived > 0 && peak > 0)
        fputs (", counting the product's 2*M*N*K from the shapes", f);
    if (derived > 0 && host)   //  round 16: and the softmax after it, estimated
        kf_prompt_epilogue_brief (f, spec, device);
    double one_ns = kf_jnum (json_object_get (o, "one_core"), "median_ns", 0);
    if (ns > 0 && one_ns > 0) {
        fputs ("; ", f);
        kf_prompt_threads_own_text (f, ns, one_ns, json_object_get (o, "host_load"),
                                    kf_prompt_threads_side_by_side (o));
    }
    //  Round 21: the kernel prompts set each kernel's cycles a vector
    //  against the budget ("about 36 cycles a vector ... budget about
    //  21"), the meta prompt gave neither; the same function writes both.
    if (host && ns > 0)
        kf_prompt_per_vector_text (f, o, spec, hardware, stores, "; per vector: ");
}

void
kf_meta_outcome_ideas (json_t *run, json_t *outcomes)
{
    kf_prompt_in_t in = { .spec = json_object_get (run, "spec"),
                          .language = kf_jstr (run, "language"),
                          .target = kf_jstr (run, "target"),
                          .population = (int) kf_jint (run, "population") };
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o) {
        //  The planner stores the idea it handed out (kf_search_idea.c);
        //  the slot's place in the list only for candidates planned before.
        if (*kf_jstr (o, "idea") || strcmp (kf_jstr (o, "phase"), "search")
            || !json_is_integer (json_object_get (o, "slot")))
            continue;
        const char *idea = kf_prompt_idea_at (&in, (int) kf_jint (o, "generation"),
                                              (int) kf_jint (o, "slot"));
        if (idea)
            json_object_set_new (o, "idea", json_string (idea));
    }
}

//  "  what it did: ..." for outcome O: the idea its attempt was asked to
//  try, the descriptor levels where it left its parent's cell, and the
//  point a sweep chose (round 6: the outcomes differed only in
//  coordinates, nearly the same for all, so the meta-prompter could not
//  tell which guidance a kernel had followed). Bounded: the idea and the
//  point are cut at KF_META_DID_MAX bytes each.
#define KF_META_DID_MAX 160
static void
s_did (FILE *f, json_t *o, const char *language)
{
    char *text = NULL;
    size_t size = 0;
    FILE *d = open_memstream (&text, &size);
    if (!d)
        return;
    bool tuning = !strcmp (kf_jstr (o, "phase"), "tuning");
    int64_t parent = kf_jint (o, "parent_id");
    if (tuning)
        fprintf (d, "a tuning template of candidate %lld", (long long) parent);
    else if (*kf_jstr (o, "idea")) {
        fputs ("asked to try \"", d);
        kf_meta_quote_cut (d, kf_jstr (o, "idea"), KF_META_DID_MAX);
        fputc ('"', d);
    }
    int c[3], p[3];
    bool has_c = sscanf (kf_jstr (o, "coords"), "{%d,%d,%d}", &c[0], &c[1], &c[2]) == 3;
    bool has_p = sscanf (kf_jstr (o, "parent_coords"), "{%d,%d,%d}", &p[0], &p[1], &p[2]) == 3;
    if (!tuning && parent) {
        fprintf (d, "%sfrom candidate %lld", ftell (d) ? "; " : "", (long long) parent);
        if (has_c && has_p) {
            int moved = 0;
            for (int k = 0; k < 3; k++)
                if (c[k] != p[k])
                    fprintf (d, "%s%s %d %s -> %d %s", moved++ ? ", " : ", it moved ",
                             kf_descriptor_dim_name_for (language, k), p[k],
                             kf_descriptor_level_name_for (language, k, p[k]), c[k],
                             kf_descriptor_level_name_for (language, k, c[k]));
            if (!moved)
                fputs (", in its parent's cell (the same three levels)", d);
        }
    }
    else if (!tuning && json_is_string (json_object_get (o, "phase")))
        fprintf (d, "%swritten from scratch", ftell (d) ? "; " : "");
    char label[KF_META_DID_MAX + 1];
    json_t *point = json_object_get (o, "best_config");
    if (json_object_size (point) && kf_tune_params_label (point, label, sizeof label) && *label)
        fprintf (d, "%sthe sweep chose %s", ftell (d) ? "; " : "", label);
    long n = ftell (d);
    if (fclose (d) == 0 && n > 0)
        fprintf (f, "\n  what it did: %s", text);
    free (text);
}

//  What an outcome's figure is (round 14: candidate 3 was shown at
//  "2.32 ms (screen timing)" while its full protocol was in flight; the
//  next kernel prompt had it at 2.21 ms, and a strategy quoted the screen
//  figure). The fidelity is the candidate's own (kf_meta.c), its spread
//  kf_lineage_noise's of the screen's samples.
static void
s_fidelity (FILE *f, json_t *o)
{
    const char *fid = kf_jstr (o, "fidelity");
    bool pending = !strcmp (fid, "pending");
    if (!strcmp (fid, "full")) {
        fputs (" (full protocol)", f);
        return;
    }
    if (!pending && strcmp (fid, "screen"))
        return;
    fprintf (f, " (screen timing only%s", pending ? ", its full protocol still running" : "");
    //  Round 17: candidate 20's 154.72x was the best of 8 points; 95.18x
    //  in full.
    if (kf_lineage_screen_points (o) > 1) {
        fputs ("; ", f);
        fprintf (f, KF_LINEAGE_BEST_OF, kf_lineage_screen_points (o));
    }
    if (kf_jnum (o, "noise", 0) > 0)
        fprintf (f, ", +/-%.0f%%", 100 * kf_jnum (o, "noise", 0));
    fputs (": a short, noisy figure; not one to cite in a section)", f);
}

//  Round 20: the vectoriser's report of a built outcome (kf_meta.c's
//  vec_report: the compile worker's summary line, then its loop lines),
//  as "vectoriser: 0 loops vectorised, 1 not; line 102: not vectorised
//  because of a branch in the loop ...": the summary after its mark and
//  the first S_VEC_LINES loop lines, each at most S_VEC_LINE bytes, on
//  one line, control characters and backquotes replaced (the loop lines
//  quote the candidate's code).
#define S_VEC_LINES 2
#define S_VEC_LINE 160
static void
s_vec_report (FILE *f, const char *report)
{
    const char *colon = strstr (report, "build):");
    if (!colon)
        return;
    const char *p = colon + strlen ("build):");
    fputs ("\n  vectoriser:", f);
    for (int shown = -1; *p && shown < S_VEC_LINES;) {
        size_t len = strcspn (p, "\n");
        bool loop = !strncmp (p, "- line", 6);
        //  Of explicit SIMD, "not vectorised" says nothing of scalar code.
        if (!strncmp (p, "This code is explicit SIMD", 26))
            fputs (" (explicit SIMD: the report is of GCC's auto-vectoriser only)", f);
        if (shown < 0 || loop) {
            const char *q = loop ? p + 2 : p;
            size_t n = len - (size_t) (q - p);
            //  The summary's full stop gives way to the separator.
            if (shown < 0 && n > 0 && q[n - 1] == '.')
                n--;
            if (shown >= 0)
                fputs ("; ", f);
            for (size_t i = 0; i < n && i < S_VEC_LINE; i++) {
                unsigned char c = (unsigned char) q[i];
                fputc (c < 0x20 || c == 0x7f || c == '`' ? ' ' : c, f);
            }
            if (n > S_VEC_LINE)
                fputs (" ...", f);
            shown++;
        }
        p += len + (p[len] == '\n');
    }
}

static void
s_outcome_line (FILE *f, json_t *o, const char *language, json_t *spec, json_t *hardware,
                bool host, double counted)
{
    fprintf (f, "- candidate %lld (generation %lld, prompt v%lld): %s",
             (long long) kf_jint (o, "candidate_id"), (long long) kf_jint (o, "generation"),
             (long long) kf_jint (o, "prompt_version"), kf_jstr (o, "status"));
    if (json_is_number (json_object_get (o, "speedup"))) {
        fprintf (f, ", %.3fx the reference", json_number_value (json_object_get (o, "speedup")));
        s_fidelity (f, o);
        //  Faster than the best that counts, and not counted: why (round
        //  15: candidate 6 at 41.078x under "the best kernel so far
        //  (candidate 5, 25.574x)").
        if (kf_meta_uncounted (o) && kf_jnum (o, "speedup", 0) > counted)
            fprintf (f, "; above the run's best that counts, but not counted yet: %s",
                     kf_meta_uncounted (o));
    }
    if (json_is_number (json_object_get (o, "candidate_ns")))
        fprintf (f, ", %.0f ns (reference %.0f ns)",
                 json_number_value (json_object_get (o, "candidate_ns")),
                 json_number_value (json_object_get (o, "reference_ns")));
    s_shares (f, o, spec, hardware, host);
    json_t *c = json_object_get (o, "correctness");
    if (json_is_object (c) && !json_is_true (json_object_get (o, "correct")))
        fprintf (f, "; match %.4f, max abs err %.3g, max rel err %.3g, cosine %.6f",
                 json_number_value (json_object_get (c, "match_fraction")),
                 json_number_value (json_object_get (c, "max_abs_err")),
                 json_number_value (json_object_get (c, "max_rel_err")),
                 json_number_value (json_object_get (c, "cosine")));
    //  A correct one's accuracy, as the kernel prompts give it (round 15:
    //  a pitfall on candidate 5's bias-first sum, max abs error 9.54e-06
    //  against a bound of 1e-05, could not cite it from the meta prompt).
    else if (json_is_object (c)) {
        if (kf_jhas_num (c, "max_abs_err"))
            fprintf (f, "; max abs error %.3g", kf_jnum (c, "max_abs_err", 0));
        if (kf_jhas_num (c, "max_rel_err"))
            fprintf (f, "; max rel error %.3g", kf_jnum (c, "max_rel_err", 0));
    }
    if (*kf_jstr (o, "coords"))
        s_coords (f, kf_jstr (o, "coords"), language);
    //  The load it was timed under, as kernel prompts give it (round 6:
    //  0 to 8 other runnable tasks on 2 CPUs, unsaid per outcome, and the
    //  same code measured 2.3x apart).
    char load[300];
    kf_prompt_load_text (json_object_get (o, "host_load"), json_object_get (o, "host_condition"),
                         load, sizeof load);
    if (*load)
        fprintf (f, "; %s", load);
    s_did (f, o, language);
    if (*kf_jstr (o, "detail"))
        fprintf (f, "\n  verdict: %s", kf_jstr (o, "detail"));
    if (*kf_jstr (o, "log"))
        fprintf (f, "\n  compiler: %.*s", (int) strcspn (kf_jstr (o, "log"), "\n"),
                 kf_jstr (o, "log"));
    s_vec_report (f, kf_jstr (o, "vec_report"));
    fputs ("\n", f);
}

//  The target's figures the outcomes are judged against (round 9: the
//  meta-prompter wrote a strategy about threads without the thread start
//  cost or one core's peak the kernel prompts give; it quoted them from
//  kernel prompts it had seen, which a real meta-model has not).
static void
s_target (FILE *f, json_t *hardware, json_t *spec, bool host)
{
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    if (!d)
        return;
    fprintf (f, "\n## The target (fixed; what the outcomes were measured on)\n- %s",
             *kf_jstr (d, "name") ? kf_jstr (d, "name") : "unnamed device");
    if (kf_jnum (d, "cores", 0) > 0)
        fprintf (f, ", %.0f %s", kf_jnum (d, "cores", 0), host ? "logical CPUs" : "cores");
    if (host && kf_jnum (d, "clock_mhz_measured", 0) > 0)
        fprintf (f, ", %.0f MHz measured", kf_jnum (d, "clock_mhz_measured", 0));
    if (kf_jnum (d, "peak_gflops_one_core", 0) > 0)
        fprintf (f, "; f32 FMA peak %.0f GFLOP/s on one core", kf_jnum (d, "peak_gflops_one_core", 0));
    if (kf_jnum (d, "peak_gflops_all_threads", 0) > 0)
        fprintf (f, ", %.0f with every CPU", kf_jnum (d, "peak_gflops_all_threads", 0));
    else if (kf_jnum (d, "peak_gflops", 0) > 0)
        fprintf (f, "; f32 peak %.0f GFLOP/s", kf_jnum (d, "peak_gflops", 0));
    //  Round 36: a bare "copy bandwidth 25.1 GB/s" where the kernel
    //  prompts say the memory can do at least 39.8 (a streaming copy).
    if (kf_jnum (d, "copy_bandwidth_gbs", 0) > 0) {
        const char *name;
        double copy = kf_jnum (d, "copy_bandwidth_gbs", 0);
        double best = kf_prompt_copy_ceiling (d, copy, &name, NULL);
        if (best > copy)
            fprintf (f, "; memcpy on every core %.1f GB/s, below %s (%.1f GB/s), so the memory "
                     "can do at least %.1f", copy, name, best, best);
        else
            fprintf (f, "; copy bandwidth %.1f GB/s", copy);
    }
    //  Round 17: with the copy figure alone a per-vector claim could not
    //  be checked: the timing flushes the caches, so inputs arrive at the
    //  cold read rates (kf_prompt_budget.h).
    double one = kf_jnum (d, "read_cold_one_core_gbs", 0);
    double all = kf_jnum (d, "read_cold_all_cores_gbs", 0);
    if (host && (one > 0 || all > 0)) {
        fputs ("; memory read with cold caches (the rate the timing's inputs arrive at, bytes "
               "read)", f);
        if (one > 0)
            fprintf (f, " %.1f GB/s by one core (a one-thread kernel)", one);
        if (all > 0)
            fprintf (f, "%s %.1f GB/s by all cores at once (a threaded kernel)",
                     one > 0 ? "," : "", all);
    }
    //  Round 20: and the rate outputs leave at with streaming stores.
    double w1 = kf_jnum (d, "write_stream_one_core_gbs", 0);
    double wa = kf_jnum (d, "write_stream_all_cores_gbs", 0);
    if (host && (w1 > 0 || wa > 0)) {
        fputs ("; memory written with streaming stores alone (bytes written)", f);
        if (w1 > 0)
            fprintf (f, " %.1f GB/s by one core", w1);
        if (wa > 0)
            fprintf (f, "%s %.1f GB/s by all cores at once", w1 > 0 ? "," : "", wa);
    }
    if (host && kf_jnum (d, "thread_start_join_us", 0) > 0)
        fprintf (f, "; starting and joining one thread %.1f us, paid in every timed call that "
                 "starts threads", kf_jnum (d, "thread_start_join_us", 0));
    fputs (".\n", f);
    //  Round 18: the kernel prompts' copy rates and floors for this
    //  task's bytes (N + M, N + 2M, on one core and on all) were left out,
    //  and the meta-prompter recomputed them to judge the outcomes.
    if (host)
        kf_prompt_task_traffic_line (f, spec, d);
    //  Round 21: and the budget each outcome's cycles a vector are set
    //  against (kf_prompt_per_vector_text's "as in the Target section").
    if (host)
        kf_prompt_task_budget_line (f, spec, d, kf_jstr (hardware, "compile_isa"));
}

//  Whether SPEC lists its outputs (their dtypes give the bounds).
static bool
s_has_outputs (json_t *spec)
{
    return json_array_size (json_object_get (spec, "outputs")) > 0;
}

//  The task's own text, fixed: what the sections must agree with and what
//  a factual correction of the philosophy quotes (round 11: the meta
//  prompt named the task only, so a model that had not seen a kernel
//  prompt could neither see the philosophy's error nor quote the formula).
static void
s_task (FILE *f, json_t *spec, json_t *output_range)
{
    json_t *ref = json_object_get (spec, "reference");
    if (!*kf_jstr (spec, "description") && !*kf_jstr (ref, "source"))
        return;
    fputs ("\n## The task (fixed; what a factual correction quotes)\n", f);
    if (*kf_jstr (spec, "description"))
        fprintf (f, "%s\n", kf_jstr (spec, "description"));
    if (*kf_jstr (ref, "source")) {
        fprintf (f, "Reference implementation (%s):\n",
                 *kf_jstr (ref, "language") ? kf_jstr (ref, "language") : "source");
        kf_meta_source (f, kf_jstr (ref, "source"));
    }
    //  The accuracy bounds, as the kernel prompt states them, for the
    //  outcomes' errors (round 15).
    if (s_has_outputs (spec))
        kf_prompt_tolerance_section (f, spec, output_range);
}

//  The ideas attempts are handed (LIST, kf_meta_idea_list's), numbered as
//  an idea edit names them, dropped ones marked (round 14: the most
//  harmful text of a run was an idea, which no meta edit could reach).
//  Round 35: the list read "64 entries a first-level data TLB commonly
//  holds (this host's count is not measured)" where the kernel prompts of
//  the run said "the 72 entries this host's ... holds, measured": each
//  idea as on the host of DEVICE (kf_prompt_idea_on_host), as they do.
static void
s_ideas (FILE *f, json_t *list, json_t *spec, json_t *device)
{
    if (!json_array_size (list))
        return;
    fputs ("\n## Ideas (each attempt of the search is handed one of these in turn)\n", f);
    size_t i;
    json_t *e;
    json_array_foreach (list, i, e) {
        fprintf (f, "%zu. ", i + 1);
        if (json_object_get (e, "dropped")) {
            fputs ("(dropped, no longer handed out: ", f);
            kf_meta_quote_cut (f, kf_jstr (e, "dropped"), 160);
            fputs (") ", f);
        }
        char *on_host = kf_prompt_idea_on_host (kf_jstr (e, "text"), spec, device);
        fprintf (f, "%s\n", on_host ? on_host : kf_jstr (e, "text"));
        free (on_host);
    }
}

//  The meta-prompter's instructions (for a language model; the offline
//  one reads the payload's structured fields instead): the sections, the
//  target's figures, the outcomes, the code behind the best and the worst of them (what the
//  guidance led to at either end), and the run's best kernel when it is
//  not among them.
char *
kf_meta_prompt_text (json_t *run, json_t *sections, const kf_meta_base_t *base,
                     json_t *outcomes, int max_edits, json_t *best_kernel,
                     json_t *best_outcome, json_t *worst_outcome, json_t *history)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    long long version = (long long) base->number;
    fprintf (f,
             "You tune the instructions that another model follows when it writes %s kernels "
             "for the task '%s' on the target '%s'. Four sections of its prompt can change; "
             "the rest (task, contract, hardware, kernels) cannot. Below are the sections of "
             "prompt version v%lld, the version new kernels are written with now%s%s%s; your "
             "edits apply to this text and make a new version from v%lld. Then what became of "
             "your earlier edits, and the outcomes of the latest kernels, with the figures the "
             "evaluation measured.\n",
             kf_jstr (run, "language"), kf_jstr (json_object_get (run, "spec"), "name"),
             kf_jstr (run, "target"), version, base->why && *base->why ? " (" : "",
             base->why ? base->why : "", base->why && *base->why ? ")" : "", version);
    for (int i = 0; i < KF_PROMPT_SECTIONS; i++) {
        const char *name = kf_prompt_section_names[i];
        fprintf (f, "\n## Section %s\n%s", name, kf_jstr (sections, name));
    }
    json_t *ideas = kf_meta_idea_list (sections, json_object_get (run, "spec"),
                                       kf_prompt_target_kind (kf_jstr (run, "target"),
                                                              kf_jstr (run, "language")));
    s_ideas (f, ideas, json_object_get (run, "spec"),
             json_array_get (json_object_get (base->hardware, "devices"), 0));
    s_task (f, json_object_get (run, "spec"), base->output_range);
    s_target (f, base->hardware, json_object_get (run, "spec"),
              kf_prompt_target_kind (kf_jstr (run, "target"), kf_jstr (run, "language"))
                  == KF_TARGET_HOST);
    kf_meta_history_text (f, history, base->number);
    fputs ("\n## Recent outcomes (oldest first)\n", f);
    s_axes (f, kf_jstr (run, "language"));
    if (s_has_outputs (json_object_get (run, "spec")))
        fputs ("A correct outcome's max abs and rel errors are its worst over the input sets; "
               "the bounds are under \"What counts as correct\" above.\n", f);
    //  The run's best that counts: its best kernel (runs.best_candidate_id).
    double counted = best_kernel ? kf_jnum (best_kernel, "speedup", 0) : 0;
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        s_outcome_line (f, o, kf_jstr (run, "language"), json_object_get (run, "spec"),
                        base->hardware,
                        kf_prompt_target_kind (kf_jstr (run, "target"), kf_jstr (run, "language"))
                            == KF_TARGET_HOST,
                        counted);
    //  Round 17: a refuted guess stayed in the sections (kf_meta_guess.h).
    kf_meta_guess_text (f, sections, outcomes, history, base->number);
    kf_meta_code (f, outcomes, best_kernel, best_outcome, worst_outcome, counted);
    fprintf (f,
             "\n## What to do\n"
             "First, under \"Diagnosis:\", say which guidance was missing, misleading or too "
             "vague given these outcomes. Then give at most %d edits, each as:\n"
             "SECTION: <philosophy|strategies|pitfalls|analysis>\n"
             "<<<<<<< SEARCH\n"
             "exact text copied from that section (empty to append to it)\n"
             "=======\n"
             "the new text\n"
             ">>>>>>> REPLACE\n"
             "An edit whose search text is not found exactly once in its section, that "
             "touches anything outside the four sections, or beyond the first %d, is "
             "rejected. The search text must quote whole sentences or whole lines: it starts "
             "where a line or a sentence starts and ends where one ends (its full stop "
             "included), or it is rejected, since a replacement of part of a sentence is "
             "spliced into the rest of it. Keep each section short and concrete.\n",
             max_edits, max_edits);
    if (json_array_size (ideas))
        fprintf (f,
                 "You may also change the list of ideas, by at most %d lines of their own, "
                 "outside the edit blocks:\n"
                 "DROP IDEA <number>: <why, naming the outcomes or the task text that show it, "
                 "one line of at most %d bytes>\n"
                 "REWORD IDEA <number>: <the idea's new text, one line of at most %d "
                 "bytes (an ASCII character is one byte)>\n"
                 "ADD IDEA: <a new idea's text, one line of at most %d bytes>\n"
                 "Each limit counts the text after the colon, not the command before it. "
                 "A dropped idea is no longer handed to attempts. Numbers never change: a "
                 "dropped idea keeps its place, a reworded one its number, and an added one "
                 "takes the next number and is handed out in turn like the others. Drop or "
                 "reword an idea that is wrong for this task (it describes another task's "
                 "formula or identity, or a means the target lacks), not one that lost once: "
                 "the planner already hands out last an idea whose tries lost. Add an idea "
                 "the list lacks that the outcomes point to (what binds the kernels, a "
                 "combination no attempt has been handed), at most %d a reply, not one the "
                 "list already has in other words; the list holds at most %d, dropped ones "
                 "included. Word an idea as what to do to whatever kernel it is handed, not "
                 "as a change to one kernel of these outcomes: the planner hands it to any "
                 "kernel that lacks it, threaded or not, with either kind of store, and the "
                 "attempt it goes to sees only its text. The list changes with the new "
                 "version your accepted edits make.\n",
                 max_edits, KF_META_IDEA_MAX, KF_META_IDEA_MAX, KF_META_IDEA_MAX,
                 KF_META_IDEA_ADDS, KF_META_IDEAS_MAX);
    json_decref (ideas);
    json_t *guesses = kf_meta_guess_lines (sections);
    if (json_array_size (guesses))
        fprintf (f,
                 "You may also retract a guess listed under \"Guesses the sections hold\", by "
                 "a line of its own outside the edit blocks, at most %d a reply:\n"
                 "RETRACT GUESS <number>: <why, naming the outcomes that refute it, as "
                 "\"candidate N\" with their figures>\n"
                 "A retraction removes the guess's whole line from its section. To keep part "
                 "of the line, copy it as an edit's SEARCH text and write what still holds as "
                 "the REPLACE text instead. Retract a guess that outcomes refute; one that no "
                 "outcome has tested yet stays.\n",
                 max_edits);
    json_decref (guesses);
    //  Claims on thin evidence (round 4: "the per-element math binds",
    //  written from 3 outcomes, refuted by the next ones).
    int full = 0;
    json_array_foreach (outcomes, i, o)
        if (!strcmp (kf_jstr (o, "fidelity"), "full") && json_is_number (json_object_get (o, "speedup")))
            full++;
    //  A factual error against the task itself is no claim from outcomes
    //  (round 11: "additions, products, minima and maxima only" for a
    //  formula with a divide, unfixable under the rule above).
    fprintf (f,
             "State each diagnosis as a hypothesis and name the outcomes it rests on (their "
             "candidate numbers and figures); a screen figure alone is weak evidence. Do not "
             "rewrite the philosophy from fewer than %d outcomes with a full-protocol figure: "
             "this round has %d%s. One exception: a plain factual error that the task's own "
             "text or reference code contradicts (what the formula computes, the shapes, the "
             "data type) may be fixed at any time, by an edit whose new text contains \"%s\" "
             "and quotes in double quotes at least %d characters copied exactly from the task "
             "section above that show it. A strategy or pitfall that says what works or what "
             "loses names at least two full-protocol outcomes that show it, or says it is a "
             "guess to test (round 5 accepted strategies that one outcome each had suggested "
             "and the next refuted). These rules are checked: a philosophy edit with fewer "
             "than %d full-protocol outcomes is rejected, and a new strategy that names fewer "
             "than %d of them as \"candidate N\" and does not call itself a guess is kept, "
             "marked \"%s\". A factual correction as above is accepted whatever the count.\n",
             KF_META_PHILOSOPHY_MIN, full,
             full < KF_META_PHILOSOPHY_MIN ? ", so leave the philosophy's claims as they are and "
                                             "put what you suspect in the analysis questions"
                                           : "",
             KF_META_FACT_WORDS, KF_META_QUOTE_MIN, KF_META_PHILOSOPHY_MIN,
             KF_META_EVIDENCE_MIN, KF_META_GUESS_MARK + 1);
    //  Ranks go stale (round 11: v2 said "Candidate 2 ... (1.38 ms, the
    //  best full-protocol figure)" while candidate 3 at 944 us already
    //  was faster, and every later kernel prompt read it).
    fputs ("Cite figures, not ranks: write \"candidate 3 (944 us, full protocol)\", never "
           "that a candidate is the best, the fastest, the slowest or the worst. The sections "
           "are read by the kernels of many later generations, and a rank is wrong as soon as "
           "one of them beats it, while a figure stays true. A sentence that names a "
           "candidate with such a word is kept but marked \"(ranked when written, ...)\".\n",
           f);
    //  Round 14: a strategy cited a screen figure that the full protocol
    //  later replaced, and an appended guess ("bound by arithmetic") stood
    //  beside the kept line it contradicted ("bound by memory again").
    fputs ("Cite full-protocol figures only. A screen figure is short and noisy and is "
           "replaced when the full protocol runs, while your sections keep what you wrote: a "
           "sentence that puts a figure beside a candidate whose outcome above is a screen "
           "timing only is kept but marked \"(candidate N's figure was a screen timing only "
           "when written, ...)\". So is one beside a full-protocol figure that awaits "
           "confirmation (said beside it above): its second timing, on fresh inputs, replaces "
           "it, often lower.\n"
           "One line, one claim: a new line that contradicts a line the sections keep (one "
           "says the loop is bound by memory, the new one by arithmetic) replaces it. Copy "
           "the old line exactly as the SEARCH text and write the corrected line as the "
           "REPLACE text, rather than appending beside it: two lines that disagree leave the "
           "kernel writer to guess which holds.\n",
           f);
    //  When the edits take effect (round 4: gen-2 prompts showed v1 after
    //  v2 was accepted: they had been planned before it).
    fprintf (f,
             "Your accepted edits make a new version that is used from the next kernel "
             "planned after this reply is judged: the kernels already planned keep the version "
             "they were planned with, so the next few outcomes may still come from v%lld. The "
             "new version is then tried on %d kernels before versions are compared by their "
             "version scores.\n",
             version, base->population > 0 ? base->population : 1);
    if (fclose (f) != 0) {
        free (text);
        return NULL;
    }
    return text;
}

