/*  kf_prompt_tune.c - the tuning request (kf_prompt_tune.h).
 *
 *  The point limit and the order points are chosen in are the compile
 *  worker's (common/kf_tune.c): the all-defaults point, its one-parameter
 *  neighbours, then points spread over the rest. Every point is judged
 *  by the evaluator's ordinary checks, so they must agree with the
 *  reference within the tolerance, not with each other bit for bit.
 */
#include "kf_prompt_tune.h"
#include "kf_descriptor.h"
#include "kf_descriptor_text.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_target.h"
#include "kf_prompt_threads.h"
#include "kf_retune.h"
#include "kf_tune.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

//  Parameters that mean something on each kind of target. The host's
//  thread counts come from its core count (s_example): a list of 1,4,8
//  on a 2-core host wastes points (round 3). Each list starts with the
//  example kernel's default, not with its smallest value (round 11: an
//  example whose defaults were all 1 and first led a model towards
//  NTHREADS=1,2 for a kernel whose #define was 2).
static const char *const s_examples[] = {
    [KF_TARGET_HOST] = "    /* kf-tune: ROWS_PER_STEP=2,1,4 UNROLL=4,1,2,8 */\n",
    [KF_TARGET_CUDA] = "    /* kf-tune: BLOCK=256,128,512 VEC=4,1,2 */\n",
    [KF_TARGET_INTEL] = "    /* kf-tune: WG=128,64,256 VEC=4,1,2 */\n",
};

//  A conditional parameter on each kind of target: the distance matters
//  only when prefetching, the tile only when staging through local memory.
static const char *const s_when_examples[] = {
    [KF_TARGET_HOST] = "PREFETCH=0,1 PREFETCH_DIST=8,4,16 when PREFETCH=1",
    [KF_TARGET_CUDA] = "SMEM=1,0 TILE=32,16,64 when SMEM=1",
    [KF_TARGET_INTEL] = "SLM=1,0 TILE=32,16,64 when SLM=1",
};

//  The example's defaults in words, for the sentence after it.
static const char *const s_example_defaults[] = {
    [KF_TARGET_HOST] = "#define ROWS_PER_STEP 2 and #define UNROLL 4",
    [KF_TARGET_CUDA] = "#define BLOCK 256 and #define VEC 4",
    [KF_TARGET_INTEL] = "#define WG 128 and #define VEC 4",
};

static const char *const s_example_kinds[] = {
    [KF_TARGET_CUDA] = "(threads per block, elements per thread, vector width, tile sizes, rows "
                       "per block)\n",
    [KF_TARGET_INTEL] = "(work-group size, sub-group size, elements per work-item, tile "
                        "sizes)\n",
};

//  The example kf-tune line for KIND; on the host, thread counts up to
//  the cores of the first device of HARDWARE, none on one core. Then one
//  sentence on the order of each list: the #define's value first.
static void
s_example (FILE *f, kf_target_kind_t kind, json_t *hardware)
{
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    long cores = json_is_number (json_object_get (d, "cores"))
                     ? (long) json_number_value (json_object_get (d, "cores")) : 0;
    bool threads = kind == KF_TARGET_HOST && cores >= 2;
    if (kind != KF_TARGET_HOST)
        fputs (s_examples[kind], f);
    else if (!threads) {
        fputs (s_examples[kind], f);
        fputs ("(on this CPU target: rows or tiles per step, unroll depth, accumulators, cache "
               "block sizes in elements", f);
        fputs (cores == 1 ? "; not GPU launch sizes; this host has 1 core, so the thread count "
                            "is no parameter)\n"
                          : ", threads to start, no more than the host's cores; not GPU launch "
                            "sizes)\n", f);
    }
    else {
        //  The example kernel starts 2 threads (all the cores on a host
        //  of 2 or 3), and lists 1 after its default.
        fputs ("    /* kf-tune: ROWS_PER_STEP=2,1,4 UNROLL=4,1,2,8 NTHREADS=2,1", f);
        if (cores / 2 > 2)
            fprintf (f, ",%ld", cores / 2);
        if (cores > 2)
            fprintf (f, ",%ld", cores);
        fputs (" */\n", f);
        //  Round 31: the example's 1 beside "a 1 in the list spends a point
        //  on a known answer" (s_one_core) read as a contradiction.
        //  Round 21: "at most the 2 cores" read as a rule against a kernel
        //  of 4 workers (two a CPU, to win time back from the host's other
        //  work), whose count the prompt also said to keep; and a count its
        //  code reads at run time (sysconf) had no #define to list.
        fprintf (f, "(on this CPU target: rows or tiles per step, unroll depth, accumulators, "
                 "cache block sizes in elements, threads to start; not GPU launch sizes. "
                 "Thread counts beyond the %ld cores of this host are allowed, but pay only "
                 "where the host's other work takes CPU time; a kernel that starts more keeps "
                 "its own count as the default. A count the code reads at run time (sysconf) "
                 "is made a parameter as a factor of it, e.g. WORKERS_PER_CPU=2,1, or as a count "
                 "with 0 for the run-time one, e.g. NTHREADS=0,1. The 1 in "
                 "the example times the kernel's one-thread form, a point worth spending only "
                 "where that time is not measured yet: what this prompt says of the kernel's "
                 "own one-core time decides)\n", cores);
    }
    if (kind != KF_TARGET_HOST)
        fputs (s_example_kinds[kind], f);
    fprintf (f, "Each list starts with the kernel's own default, the value of its #define, "
             "then the other values: the example is for a kernel with %s%s, so %s.\n",
             s_example_defaults[kind], threads ? " that starts 2 threads (#define NTHREADS 2)"
                                               : "",
             threads ? "its list is NTHREADS=2,1, and NTHREADS=1,2 would be right only for a "
                       "kernel whose #define NTHREADS is 1"
                     : kind == KF_TARGET_HOST ? "its lists begin ROWS_PER_STEP=2 and UNROLL=4"
                     : kind == KF_TARGET_CUDA ? "its lists begin BLOCK=256 and VEC=4"
                                              : "its lists begin WG=128 and VEC=4");
}

static void
s_table (FILE *f, json_t *configs)
{
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row) {
        char label[256];
        kf_tune_params_label (json_object_get (row, "params"), label, sizeof label);
        fprintf (f, "- %s: ", label);
        const char *verdict = kf_jstr (row, "verdict");
        if (!*verdict || !strcmp (verdict, "not_run"))
            fprintf (f, "not run%s%s\n", *kf_jstr (row, "skipped_reason") ? " (" : "",
                     *kf_jstr (row, "skipped_reason") ? kf_jstr (row, "skipped_reason") : "");
        else if (json_is_number (json_object_get (row, "speedup"))) {
            fprintf (f, "%s, %.3fx, %.4g us per call (%s timing", verdict,
                     kf_jnum (row, "speedup", 0), kf_jnum (row, "median_ns", 0) / 1e3,
                     *kf_jstr (row, "fidelity") ? kf_jstr (row, "fidelity") : "?");
            //  The same point timed again in full (kf_prompt_kernel).
            if (json_is_number (json_object_get (row, "full_speedup")))
                fprintf (f, "; then the full protocol: %.3fx, %.4g us per call",
                         kf_jnum (row, "full_speedup", 0),
                         kf_jnum (row, "full_median_ns", 0) / 1e3);
            //  The load each point was timed under (round 25), so a point
            //  slower under more load is not read as lost.
            double share = kf_jnum (json_object_get (row, "host_load"), "others_cpu_share", -1);
            if (share >= 0)
                fprintf (f, "; other processes took %.0f%% of the CPUs' time meanwhile",
                         100 * share);
            fputs (")\n", f);
        }
        else
            fprintf (f, "%s%s%.200s\n", verdict, *kf_jstr (row, "detail") ? ": " : "",
                     kf_jstr (row, "detail"));
        if (*kf_jstr (row, "skipped_reason") && strcmp (verdict, "not_run") && *verdict)
            fprintf (f, "  (%s)\n", kf_jstr (row, "skipped_reason"));
    }
}

//  Round 11: the run's best matmul kernel started two threads and ran at
//  79% of ONE core's measured peak, no faster than the one-thread
//  kernels, and no prompt said so. When the kernel to template starts
//  threads and every figure it has against the host's one-core figures
//  (compute against one core's FMA peak, bandwidth against one core's
//  cold read or copy) is within them, say so and ask for 1 among the
//  thread counts.
static void
s_one_core (FILE *f, const kf_prompt_in_t *in, kf_target_kind_t kind)
{
    json_t *k = in->base;
    if (kind != KF_TARGET_HOST || !k
        || !kf_prompt_source_does (kf_jstr (k, "source"), in->language, KF_IDEA_THREADS))
        return;
    //  Round 15: "its threads bought nothing measurable" was said from its
    //  bandwidth of a kernel whose same body on one thread was in the run
    //  and took 2.95 ms against its 2.17 ms. A measured twin says it.
    double twin_ns, ns = kf_jnum (k, "candidate_ns", 0), own_ns = kf_prompt_threads_own_ns (k);
    unsigned features;
    int64_t twin = kf_prompt_threads_twin (in, k, &twin_ns, &features);
    long long id = (long long) kf_jint (k, "id");
    //  Its own one-core figure first: the same code, so its one-thread
    //  point is a known answer (round 17: a 4 x 4 tile read by its tags as
    //  a 5 x 4 one less its threads was called "measured already").
    if (own_ns > 0 && ns > 0) {
        char took[32];
        kf_prompt_time_text (ns, took, sizeof took);
        fprintf (f, "Candidate %lld starts threads and takes %s a call; ", id, took);
        kf_prompt_threads_own_text (f, ns, own_ns, json_object_get (k, "host_load"),
                                    kf_prompt_threads_side_by_side (k));
        fputs (".", f);
        kf_prompt_threads_load (f, in, k, 0);
        //  Round 51: "a 1 in the list spends a point on a known answer"
        //  here, and "a one-thread form ... which the one-core time above
        //  does not measure" in another prompt of the run: the one-core
        //  time is near a one-thread form, not the same, and each text
        //  says so.
        //  Round 52: "a gap of 138%" called a known loser where the same
        //  paragraph had put that gap down to the load (threads that hardly
        //  ran side by side): then the one-thread form is not known.
        double side = kf_prompt_threads_side_by_side (k);
        if (ns < own_ns && !(side > 0 && side < KF_PROMPT_SIDE_BY_SIDE))
            fprintf (f, " Keep the thread count candidate %lld starts as the default. Its "
                     "one-core time (its threads started, held to one CPU) is not quite a "
                     "one-thread form, which starts none, but a start costs microseconds "
                     "against a gap of %.0f%%: a 1 in the list would most likely spend a point "
                     "on a known loser.\n", id, 100 * (own_ns / ns - 1));
        else
            //  Round 40's notes: read beside "worth spending only where that
            //  time is not measured yet" as a contradiction.
            fprintf (f, " Make the thread count a parameter and put 1 among its values, after "
                     "the count candidate %lld starts (NTHREADS=2,1 for a kernel that starts "
                     "2; NTHREADS=0,1 with 0 for the count it reads at run time): a one-thread "
                     "form starts no threads at all, which the one-core time above (its threads "
                     "started, held to one CPU) does not measure.\n", id);
        return;
    }
    if (twin > 0 && ns > 0) {
        char took[32], one[32], words[KF_PROMPT_FEATURE_WORDS_MAX];
        kf_prompt_time_text (ns, took, sizeof took);
        kf_prompt_time_text (twin_ns, one, sizeof one);
        kf_prompt_feature_words (features, words, sizeof words);
        fprintf (f, "Candidate %lld starts threads, and this run holds a kernel of like design "
                 "on one thread: candidate %lld, whose code's features read as candidate %lld's "
                 "less its threads (%s), takes %s a call against candidate %lld's %s (timed in "
                 "full).", id, (long long) twin, id,
                 *words ? words : "none of the other features either", one, id, took);
        kf_prompt_threads_load (f, in, k, twin);
        fputs (" ", f);
        //  Round 17: a 4 x 4 tile read as a 5 x 4 one less its threads:
        //  features alone never make its one-thread form measured, and a
        //  parent or child is only the closest code.
        const char *own = kf_prompt_threads_twin_related (in, k, twin);
        if (ns < twin_ns && own)
            fprintf (f, "So threads look to have bought about %.0f%% of the call (that kernel, "
                     "its %s, takes %.2f times as long), though the features cannot tell a "
                     "tile's shape: keep the thread count candidate %lld starts as the default, "
                     "and put 1 among its values so that its own one-thread form is timed.\n",
                     100 * (1 - ns / twin_ns), own, twin_ns / ns,
                     id);
        else if (ns < twin_ns)
            fprintf (f, "So threads look to have bought about %.0f%% of the call, but "
                     "candidate %lld is neither its parent nor its child and may differ in more "
                     "than its threads (the tags cannot tell a tile's shape): keep the count "
                     "candidate %lld starts as the default, and put 1 among its values so that "
                     "its own one-thread form is timed.\n",
                     100 * (1 - ns / twin_ns), (long long) twin, id);
        else
            fprintf (f, "So its threads have not paid here (%.0f%% more time with them): make "
                     "the thread count a parameter and put 1 among its values, after the count "
                     "candidate %lld starts (NTHREADS=2,1 for a kernel that starts 2), so that "
                     "the one-thread point is timed beside the parent's.\n",
                     100 * (ns / twin_ns - 1), id);
        return;
    }
    json_t *d = json_array_get (json_object_get (in->hardware, "devices"), 0);
    double peak = kf_jnum (d, "peak_gflops_one_core", 0);
    //  Round 14: the kernel's bytes are timed with cold caches, so they
    //  are set against one core's cold read rate where the host has one,
    //  not its warm copy rate (37.0 GB/s was "91% of the 40.7 GB/s one
    //  core copies alone"). Round 17: counted as they cross the bus, N +
    //  2M for ordinary stores, as the position line's cold shares are
    //  (43.5 GB/s of N + M was "94% of one core's read").
    kf_share_t one = kf_prompt_memory_share (json_object_get (k, "bandwidth"), in->spec, d,
                                             kf_prompt_stores (k, in->spec, in->language,
                                                               KF_TARGET_HOST),
                                             KF_SHARE_ONE_CORE);
    double gflops = kf_jnum (json_object_get (k, "compute"), "candidate_gflops", 0);
    double gbs = one.gbs, copy = one.rate;
    //  A matrix product with no count of its own: 2*M*N*K over its time,
    //  as the position line derives it (kf_prompt_target.c).
    if (!(gflops > 0) && ns > 0)
        gflops = kf_prompt_product_flops (in->spec, NULL) / ns;
    //  The bandwidth says something of threads only for a kernel that
    //  moves data near one core's rate; and a figure timed beside other
    //  work says nothing (round 13: an erf kernel bound by its arithmetic,
    //  at 36% of one core's copy rate and timed with 60% of the CPUs
    //  taken, was called one core's worth).
    bool by_compute = gflops > 0 && peak > 0,
         by_copy = gbs > 0 && copy > 0 && gbs >= KF_PROMPT_TUNE_NEAR_COPY * copy;
    if ((!by_compute && !by_copy) || (by_compute && gflops > peak) || (by_copy && gbs > copy)
        || kf_prompt_load_busy (json_object_get (k, "host_load")))
        return;
    fprintf (f, "Candidate %lld starts threads, yet it measured no more than one core's worth:",
             id);
    if (by_compute)
        fprintf (f, " %.1f GFLOP/s, %.0f%% of the %.1f GFLOP/s one core reaches alone (the f32 "
                 "FMA peak the exec worker measured)%s", gflops, 100 * gflops / peak, peak,
                 by_copy ? ";" : "");
    if (by_copy)
        fprintf (f, " %.1f GB/s counting %s (%s), %.0f%% of the %.1f GB/s of %s (%s)", gbs,
                 one.traffic, one.why, 100 * one.share, copy, one.rate_name,
                 strstr (one.rate_name, "cold") ? "the kernel's bytes are timed cold too"
                                                : "warm caches; the kernel's bytes are timed cold");
    //  Round 15: "bought nothing measurable" was said of a kernel whose
    //  one-thread form took 1.36 times as long: one core bound by its
    //  arithmetic stays within one core's bytes with two threads too.
    fprintf (f, ". So its figures stay within what one core does alone; that does not show "
             "what its threads bought (a kernel bound by its arithmetic on one core gains from "
             "a second one without leaving these bounds), and no one-thread timing of it "
             "exists yet. Make the thread count a "
             "parameter and put 1 among its values, after the count candidate %lld starts "
             "(NTHREADS=2,1 for a kernel that starts 2), so that the one-thread point is timed "
             "beside the parent's.\n", id);
}

//  Why this kernel is templated (round 3: a tuning prompt templated an
//  older, slower elite and did not say why): a tuning round takes the
//  fastest elites of the archive, one per cell (kf_search_plan.c,
//  kf_select_best), so it is its approach's best, not always the run's.
static void
s_why (FILE *f, const kf_prompt_in_t *in)
{
    if (!in->base || !*kf_jstr (in->base, "source"))
        return;
    long long id = (long long) kf_jint (in->base, "id");
    fprintf (f, "Why this kernel: a tuning round turns the fastest kernels of the archive into "
             "templates, one per cell (each cell holds the fastest kernel of one approach");
    char cell[256];
    if (*kf_jstr (in->base, "coords"))
        fprintf (f, "; this one's cell is %s", kf_descriptor_cell_text (in->target,
                                                                     kf_jstr (in->base, "coords"),
                                                                     cell, sizeof cell));
    fputs (")", f);
    long long best = in->best ? (long long) kf_jint (in->best, "id") : 0;
    if (best && best != id && json_is_number (json_object_get (in->best, "speedup")))
        fprintf (f, ". Candidate %lld (%.3fx) is the fastest of its cell, not of the run: the "
                 "run's best figure is candidate %lld's, %.3fx, and the round's other prompts "
                 "template the other cells' fastest kernels.\n", id, kf_jnum (in->base, "speedup", 0),
                 best, kf_jnum (in->best, "speedup", 0));
    else if ((best == id || in->base_is_best) && in->best
             && strcmp (kf_jstr (in->best, "standing"), "counted")
             && *kf_jstr (in->best, "standing"))
        //  Round 44: "also the run's best kernel" of a kernel the heading
        //  called held for audit, not the run's reported result.
        fprintf (f, ". Candidate %lld (%.3fx) is also the fastest kernel the run has, but %s: "
                 "its figure is not yet one the run reports.\n", id,
                 kf_jnum (in->base, "speedup", 0), kf_jstr (in->best, "standing"));
    else if (best == id || in->base_is_best)
        fprintf (f, ". Candidate %lld (%.3fx) is also the run's best kernel.\n", id,
                 kf_jnum (in->base, "speedup", 0));
    else
        fputs (".\n", f);
}

//  A winner's screen this many times its full figure or more is one the
//  screens could not rank (round 39: 66.07x on the screen, 35.30x in full).
#define S_SCREEN_DROP 1.25

//  Round 22: a second tuning round swept a template whose sweep had won
//  at its own defaults, and so built its source and points again. Such
//  a template (IN's converged) comes to the model instead, with what
//  its sweep found and what a new template must change; its table is
//  given here unless the section shows it already (as the kernel to
//  improve's or the last template's).
static void
s_converged (FILE *f, const kf_prompt_in_t *in)
{
    json_t *t = in->converged;
    if (!t)
        return;
    long long id = (long long) kf_jint (t, "id");
    json_t *configs = json_object_get (t, "configs");
    char label[256] = "";
    kf_tune_params_label (json_object_get (kf_retune_winner (configs), "params"), label,
                          sizeof label);
    bool shown = (in->base && kf_jint (in->base, "id") == id)
                 || (in->last && kf_jint (in->last, "id") == id
                     && json_array_size (json_object_get (in->base, "configs")) < 2);
    fprintf (f, "Candidate %lld's sweep of %zu points found none faster than its own "
             "defaults%s%s%s. Sweeping the same lists around them again would build the same "
             "points, so this round asks you for a new template rather than sweeping it: keep "
             "those defaults, and add a parameter for a choice that sweep did not cover (a "
             "block or tile size, an unroll depth, a prefetch distance, a thread count), or "
             "move a list past its edge where the fastest value sits at one. A template with "
             "the same parameters and lists has candidate %lld's source and takes its verdict "
             "without a sweep.\n", id, json_array_size (configs), *label ? " (" : "", label,
             *label ? ")" : "", id);
    //  Round 26: such a sweep timed while others took 51-60% of the CPUs
    //  (its defaults, the run's best code, at 4.3-4.6 ms against 3.31 ms
    //  quiet) read as settled. (Since round 30 such a sweep is swept
    //  again once, where the plan can: kf_search_plan.c.)
    double lo, hi;
    if (kf_retune_sweep_busy (configs, &lo, &hi))
        fprintf (f, "That sweep was timed while other processes took %.0f-%.0f%% of the CPUs' "
                 "time, so its points' differences may be the load's: \"none faster\" is "
                 "no proof that the lists hold nothing better.\n", 100 * lo, 100 * hi);
    //  Round 39: a winner that won on its screen (66.07x) came to 35.30x
    //  in full, under every other point's screen, and "none faster" stood.
    json_t *w = kf_retune_winner (configs);
    double screen = kf_jnum (w, "speedup", 0), full = kf_jnum (w, "full_speedup", 0), other = 0;
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row)
        if (row != w && !strcmp (kf_jstr (row, "verdict"), "correct"))
            other = fmax (other, json_is_number (json_object_get (row, "full_speedup"))
                                     ? kf_jnum (row, "full_speedup", 0)
                                     : kf_jnum (row, "speedup", 0));
    if (full > 0 && screen >= S_SCREEN_DROP * full && other > full)
        fprintf (f, "Its winning point won on its screen (%.2fx) and came to %.2fx in full, "
                 "%.2f times lower and under another point's screen (%.2fx): the screens did "
                 "not tell its points apart, so \"none faster\" is no proof either.\n", screen,
                 full, screen / full, other);
    if (!shown) {
        fprintf (f, "Candidate %lld's sweep:\n", id);
        s_table (f, configs);
    }
}

void
kf_prompt_tune_section (FILE *f, const kf_prompt_in_t *in)
{
    kf_target_kind_t kind = kf_prompt_target_kind (in->target, in->language);
    int points = in->tune_points > 0 ? in->tune_points : 8;
    json_t *tol = json_object_get (in->spec, "tolerance");
    fputs ("\n## Tuning parameters\n", f);
    json_t *configs = json_object_get (in->base, "configs");
    //  A kernel that was swept already is a template: the code shown has
    //  its own defaults, and the point that won (the full protocol's
    //  first, as the kernel's figure and the retuning take it) may differ
    //  from them.
    json_t *won = kf_retune_winner (configs);
    s_why (f, in);
    if (in->base && *kf_jstr (in->base, "source") && json_array_size (configs) > 1) {
        char label[256] = "";
        if (won)
            kf_tune_params_label (json_object_get (won, "params"), label, sizeof label);
        fprintf (f, "The kernel under \"Kernel to improve\" (candidate %lld, %.3fx) is a "
                 "template already, and its code shows its own defaults, not the point that "
                 "won%s%s%s. Refine it: make the winning values the defaults, narrow the lists "
                 "around them, and add a parameter for a choice the last sweep did not "
                 "cover", (long long) kf_jint (in->base, "id"), kf_jnum (in->base, "speedup", 0),
                 *label ? " (" : "", label, *label ? ")" : "");
    }
    else if (in->base && *kf_jstr (in->base, "source"))
        fprintf (f, "Rewrite the kernel under \"Kernel to improve\" (candidate %lld, %.3fx) "
                 "as a template", (long long) kf_jint (in->base, "id"),
                 kf_jnum (in->base, "speedup", 0));
    else
        fputs ("Write the kernel as a template", f);
    fprintf (f, ": its choices that depend on the hardware become parameters. Give each one "
             "a default with\n"
             "    #ifndef NAME\n    #define NAME default\n    #endif\n"
             "and list the values worth trying on one comment line, for example\n");
    s_example (f, kind, in->hardware);
    //  Round 11: whether the defaults had to be the parent's choices was
    //  not said (a model kept them, unsure). They must: the all-defaults
    //  point is then the parent timed again, the sweep's fixed point.
    if (in->base && *kf_jstr (in->base, "source") && json_array_size (configs) < 2)
        fprintf (f, "The defaults must reproduce candidate %lld as it is: each default is the "
                 "value candidate %lld uses, so the all-defaults point, the first one built, "
                 "is candidate %lld itself and every one-parameter move is measured against "
                 "it. A default may differ from candidate %lld's choice only where you say "
                 "so in your Analysis, naming the parameter, candidate %lld's value and the "
                 "new default.\n", (long long) kf_jint (in->base, "id"),
                 (long long) kf_jint (in->base, "id"), (long long) kf_jint (in->base, "id"),
                 (long long) kf_jint (in->base, "id"), (long long) kf_jint (in->base, "id"));
    fprintf (f, "A constant the kernel already has as a #define becomes a parameter when you "
             "wrap it in #ifndef as above. Leave fixed, as a plain #define, a constant that the "
             "code's structure hard-wires (a width matched by a fixed number of named "
             "registers or unrolled statements, say), and say so in a comment beside it, "
             "unless you rewrite that code to follow the value: a template may add code "
             "that follows a parameter (a loop over UNROLL instead of unrolled statements, a "
             "thread count), as long as the all-defaults point computes as the kernel did.\n"
             "At most %d points are built and timed: the all-defaults point first, then the "
             "points that change one parameter from it, then points spread over the rest; "
             "list few values per parameter so the points that matter are among them. Each "
             "is compiled with -DNAME=value and judged like any kernel: every point must "
             "match the reference within the tolerance above (relative error below %g, %g%% "
             "of elements, cosine at least %.6g), not the other points bit for bit. The "
             "fastest correct point counts.\n"
             "The kf-tune line holds NAME=v1,v2,... tokens separated by spaces: names are "
             "identifiers, values integers or identifiers (no spaces, no expressions); a line "
             "with any other token is ignored whole. A line is read as a kf-tune line when "
             "\"kf-tune:\" is preceded on it only by blanks, '/' and '*': "
             "`/* kf-tune: A=1,2 B=4,8 */` on a line of its own, `// kf-tune: A=1,2` and "
             "` * kf-tune: A=1,2` inside a block comment all count, and what follows \"*/\" on "
             "the line is ignored; a line with code before \"kf-tune:\" is not read. Put "
             "every parameter on one such line. A parameter's default is the value of its "
             "#define, put first in the list when the list lacks it.\n",
             points, kf_jnum (tol, "rtol", 1e-2),
             100 * kf_jnum (tol, "min_match", 0.99), kf_jnum (tol, "min_cosine", 0.99985));
    //  Issue 15: a prefetch distance listed beside PREFETCH=0,1 spent
    //  points on copies of the PREFETCH=0 code.
    fprintf (f, "A parameter that changes the code only for some values of another takes a "
             "condition after its list, `when OTHER=v1,v2`, as in `kf-tune: %s`: points that "
             "differ only in a parameter whose condition does not hold are one point, built "
             "with that parameter at its default, and count once against the limit.\n",
             s_when_examples[kind]);
    //  Round 38's notes: no round offered an accuracy knob, where cheaper
    //  math had been the run's largest step.
    kf_formula_t fm;
    if (kf_prompt_formula (in->spec, &fm) && fm.calls > 0)
        fprintf (f, "The formula calls %s: where the kernel approximates %s (a polynomial, a "
                 "reduction, Newton steps), the approximation's degree or its steps may be a "
                 "parameter too, e.g. POLY_TERMS=6,4,5 with the kernel's own count first. Each "
                 "point is judged against the tolerance on its own, so a cheaper point counts "
                 "where it still passes and one that fails is dropped, not the sweep; the "
                 "kernel's measured error (above) says how much room there is.%s\n",
                 fm.names, strchr (fm.names, ',') ? "them" : "it",
                 //  Round 46: offered for tanh(x @ w / s).sum(dim=1), whose
                 //  row sums of both signs come near zero, with no word of it.
                 kf_prompt_formula_sums_calls (&fm)
                     ? " Here the output adds such terms, which can cancel: an approximation's "
                       "error counts against their sum, small where they nearly cancel, so a "
                       "cheaper point may pass these input sets and fail others; move the "
                       "degree only where the measured error leaves a wide margin."
                     : "");
    fputs ("The points after the one-parameter moves are spread evenly over the remaining "
           "combinations in a fixed order that you do not choose, so a point that changes two "
           "parameters at once may not be built; if you want such a combination timed for "
           "certain, make its values the defaults and say so in your Analysis, keeping the "
           "parent's values in the lists. A point that does not build or is wrong loses only "
           "itself. Every point is first timed with a short screen (cold caches as always, "
           "fewer samples); the two fastest are timed again with the full protocol, and the "
           "faster full figure is the kernel's: a screen ranking can invert in full.\n", f);
    kf_prompt_screen_sweep (f, in->hardware);
    s_one_core (f, in, kind);
    if (kind == KF_TARGET_HOST && in->base)
        kf_prompt_thread_param (f, in);
    //  Not swept itself, but its last child was: that sweep is the
    //  evidence about the same code's parameters.
    json_t *child = json_object_get (in->last, "configs");
    if (json_array_size (configs) < 2 && json_array_size (child) > 1) {
        fprintf (f, "The last template made from this kernel (candidate %lld) measured %zu "
                 "points:\n", (long long) kf_jint (in->last, "id"), json_array_size (child));
        s_table (f, child);
        fputs ("Start from what that sweep learnt rather than repeating its lists.\n", f);
    }
    else if (json_array_size (configs) > 1) {
        fprintf (f, "The previous tuning of this kernel measured %zu points:\n",
                 json_array_size (configs));
        s_table (f, configs);
        fputs ("Keep the values near the fastest point, drop those that lost clearly under a "
               "like load, and try values beyond the edge where the fastest point sits at "
               "one.\n", f);
    }
    char both[1024];
    if (kf_retune_combination (json_array_size (configs) > 1 ? configs : child, both,
                               sizeof both))
        fprintf (f, "%s\n", both);
    s_converged (f, in);
}

void
kf_prompt_tune_tried (FILE *f, const kf_prompt_in_t *in)
{
    json_t *base = in->base && *kf_jstr (in->base, "source") ? in->base : NULL;
    long long base_id = base ? (long long) kf_jint (base, "id") : 0;
    long long last_id = in->last ? (long long) kf_jint (in->last, "id") : 0;
    size_t n = base ? json_array_size (in->children) : 0;
    bool last = in->last && !(last_id && last_id == base_id);
    size_t i;
    json_t *c;
    json_array_foreach (base ? in->children : NULL, i, c)
        if (last_id && kf_jint (c, "id") == last_id)
            last = false;   /* listed among the children */
    if (!n && !last)
        return;
    if (base)
        fprintf (f, "\n## Tried from this kernel so far\nOne verdict line each, newest first, "
                 "without their code: the template keeps candidate %lld's structure, so the "
                 "code of kernels made from it is not what it needs.\n", base_id);
    else
        fputs ("\n## Tried so far\nOne verdict line, without its code: the template keeps "
               "the structure of the kernel it is made from.\n", f);
    json_array_foreach (base ? in->children : NULL, i, c)
        fprintf (f, "- candidate %lld (generation %lld): %s\n", (long long) kf_jint (c, "id"),
                 (long long) kf_jint (c, "generation"), kf_jstr (c, "reason"));
    if (!last)
        return;
    json_t *k = in->last;
    fprintf (f, "- candidate %lld (the last kernel tried from it): %s", last_id,
             *kf_jstr (k, "status") ? kf_jstr (k, "status") : "not judged yet");
    char t[32];
    if (kf_jnum (k, "candidate_ns", 0) > 0)
        fprintf (f, ", %s a call",
                 kf_prompt_time_text (kf_jnum (k, "candidate_ns", 0), t, sizeof t));
    if (json_is_number (json_object_get (k, "speedup")))
        fprintf (f, ", %.3fx the reference's speed", kf_jnum (k, "speedup", 0));
    const char *detail = kf_jstr (k, "detail");
    size_t len = strcspn (detail, "\n");
    if (len)
        fprintf (f, " (%.*s)", (int) (len < 200 ? len : 200), detail);
    fputs ("\n", f);
}
