/*  kf_prompt_threads.c - what threads started in each call cost on the
 *  exec host (kf_prompt_threads.h).
 */
#include "kf_prompt_threads.h"
#include "kf_descriptor_text.h"
#include "kf_json.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_class.h"
#include "kf_prompt_target.h"
#include "kf_search_idea.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
kf_prompt_threads_host (json_t *hardware, double *start_us, double *cores)
{
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    *start_us = kf_jnum (d, "thread_start_join_us", 0);
    *cores = kf_jnum (d, "cores", 0);
    return *start_us > 0 && *cores >= 2;
}

double
kf_prompt_threads_even_ns (double start_us, double cores)
{
    return cores * start_us * 1e3;
}

/* The share of all cores' memory rate (kf_search_idea_memory_share) from
 * which the threads paragraph sets a kernel's bytes against it. */
#define S_SHARE_SAID 0.5

bool
kf_prompt_threads_lose (double start_us, double cores, double ns, bool threaded)
{
    return !threaded && start_us > 0 && cores >= 2 && ns > 0
           && ns < kf_prompt_threads_even_ns (start_us, cores);
}

//  A one-thread kernel to improve of NS a call against the break-even
//  EVEN_NS: below it, the loss the planner predicts too; above it, the
//  ratio and the net at best (round 11: "3.4 ms: not far above 1.4 ms, so
//  most of their gain goes on starting them" at 2.4 times the break-even).
//  GAIN: what all cores do against one at best (the cores, the memory's
//  measured ratio for a task bound by memory, the FMA peaks' for a
//  product, or the run's own threaded kernel against its best on one
//  thread), BASIS where it came from (NULL: the cores or the memory's).
//  Round 28: "a net gain of 49%" for a scan whose copies gave 1.33x.
static void
s_one_thread (FILE *f, double start_us, double cores, double gain, const char *basis,
              double ns, double even_ns)
{
    if (kf_prompt_threads_lose (start_us, cores, ns, false)) {
        fputs (": below that, so threads started in each call lose here unless the work per "
               "call grows.", f);
        return;
    }
    char saved[32], cost[32];
    double save_ns = gain > 1 ? ns * (1 - 1 / gain) : 0, cost_ns = (cores - 1) * start_us * 1e3;
    kf_prompt_time_text (save_ns, saved, sizeof saved);
    kf_prompt_time_text (cost_ns, cost, sizeof cost);
    fprintf (f, ", %.1f times that: threads save %s%s of it a call%s and pay %s to start, "
             "a net %s of %.0f%% of the call at best.", ns / even_ns,
             save_ns > 0 ? "at most " : "", save_ns > 0 ? saved : "nothing",
             basis ? basis : gain < cores ? " (the memory's figures above)" : "", cost,
             save_ns >= cost_ns ? "gain" : "loss", 100 * fabs (save_ns - cost_ns) / ns);
}

//  The row of candidate ID in HISTORY (kf_prompt_history: one a
//  candidate), borrowed; NULL when ID is 0 or has none.
static json_t *
s_row (json_t *history, int64_t id)
{
    size_t i;
    json_t *c;
    json_array_foreach (history, i, c)
        if (id && kf_jint (c, "id") == id)
            return c;
    return NULL;
}

//  The feature bits of kernel K (kf_prompt_source_features): those kept
//  with the plan in its row of HISTORY, else read from its source; and
//  *PARENT its parent (its row's, else its own field), 0 when not known.
static unsigned
s_features_of (json_t *history, json_t *k, const char *language, int64_t *parent)
{
    *parent = kf_jint (k, "parent_id");
    json_t *c = s_row (history, kf_jint (k, "id"));
    if (kf_jint (c, "parent_id"))
        *parent = kf_jint (c, "parent_id");
    if (json_is_integer (json_object_get (c, "features")))
        return (unsigned) json_integer_value (json_object_get (c, "features"));
    return kf_prompt_source_features (kf_jstr (k, "source"), language);
}

int64_t
kf_prompt_threads_twin (const kf_prompt_in_t *in, json_t *k, double *ns, unsigned *features)
{
    *ns = 0;
    if (features)
        *features = 0;
    int64_t parent = 0;
    unsigned mine = k ? s_features_of (in->history, k, in->language, &parent) : 0;
    if (!(mine & (1u << KF_IDEA_THREADS)))
        return 0;
    //  How the threads split the work is no part of the one-thread form.
    unsigned want = mine & ~(1u << KF_IDEA_THREADS | 1u << KF_IDEA_DYNAMIC);
    if (features)
        *features = want;
    int64_t id = kf_jint (k, "id"), twin = 0;
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c) {
        json_t *features = json_object_get (c, "features");
        double t = kf_jnum (c, "candidate_ns", 0);
        int64_t cid = kf_jint (c, "id");
        if (!cid || cid == id || !json_is_integer (features)
            || (unsigned) json_integer_value (features) != want
            || strcmp (kf_jstr (c, "status"), "correct") || strcmp (kf_jstr (c, "fidelity"), "full")
            || !(t > 0))
            continue;
        //  Its parent where that is one (the closest code), else the
        //  fastest.
        if (!twin || cid == parent || (twin != parent && t < *ns)) {
            twin = cid;
            *ns = t;
        }
    }
    return twin;
}

const char *
kf_prompt_threads_twin_related (const kf_prompt_in_t *in, json_t *k, int64_t twin)
{
    int64_t parent = 0, id = kf_jint (k, "id");
    s_features_of (in->history, k, in->language, &parent);
    if (twin <= 0)
        return NULL;
    if (twin == parent)
        return "parent";
    json_t *c = s_row (in->history, twin);
    return c && id && kf_jint (c, "parent_id") == id ? "child" : NULL;
}

double
kf_prompt_threads_in_use (const char *source, const char *language, json_t *hardware,
                          bool *assumed)
{
    *assumed = false;
    if (!kf_prompt_source_does (source, language, KF_IDEA_THREADS))
        return source && *source ? 1 : 0;
    //  A count the code fixes: #define NTHREADS 2 (or NUM_THREADS, ...).
    char *code = strdup (source);
    long count = 0;
    if (code) {
        kf_descriptor_strip_text (code, false);
        kf_descriptor_blank_if0 (code);
        for (const char *p = strstr (code, "#define"); p && !count; p = strstr (p + 1, "#define")) {
            char name[64];
            long v;
            //  Round 17: MAX_THREADS 8, an array's bound beside a count
            //  taken from sysconf, was read as 8 threads.
            if (sscanf (p, "#define %63[A-Za-z0-9_] %ld", name, &v) == 2
                && strstr (name, "THREAD") && !strstr (name, "MAX") && v >= 1 && v <= 4096)
                count = v;
        }
        free (code);
    }
    if (count >= 1)
        return (double) count;
    //  None: all the host's cores, said to be assumed.
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    double cores = kf_prompt_host_cores (d);
    *assumed = cores >= 1;
    return cores >= 1 ? cores : 0;
}

void
kf_prompt_threads_load (FILE *f, const kf_prompt_in_t *in, json_t *k, int64_t twin)
{
    char text[240];
    bool said = false;
    if (kf_prompt_load_cores (json_object_get (k, "host_load"), true, text, sizeof text)) {
        fprintf (f, " While candidate %lld was timed, %s", (long long) kf_jint (k, "id"), text);
        said = true;
    }
    json_t *c = twin > 0 ? s_row (in->history, twin) : NULL;
    if (c && kf_prompt_load_cores (json_object_get (c, "host_load"), false, text, sizeof text)) {
        fprintf (f, "%s candidate %lld (one thread) was timed, %s", said ? "; while" : " While",
                 (long long) twin, text);
        said = true;
    }
    if (said)
        fputs (".", f);
}

//  Round 26: "threads look to have bought about 69% of the call (that
//  kernel takes 3.26 times as long)" on 2 CPUs, of a one-thread kernel
//  of another design. Past what CORES can divide a call by (with a
//  margin for the timings' noise), the two differ in more than threads:
//  says so and returns true, else writes nothing.
#define S_BEYOND_CORES 1.15
static bool
s_beyond_threads (FILE *f, double ns, double one_ns, double cores)
{
    if (!(cores >= 1) || !(ns > 0) || !(one_ns > S_BEYOND_CORES * cores * ns))
        return false;
    fprintf (f, "that kernel takes %.2f times as long, more than %.0f CPUs can divide a call "
             "by, so the two differ in more than their threads (a tile, a loop order, a "
             "layout) and this says nothing of what threads buy.", one_ns / ns, cores);
    return true;
}

//  A threaded kernel to improve of NS a call: its time includes its
//  starts, so it is set against the run's fastest single-thread kernel
//  rather than the break-even (round 11: "1.84 ms: not far above 1.4 ms"
//  of a threaded kernel no faster than one thread).
static void
s_threaded (FILE *f, double ns, double own_ns, json_t *load, double cpu_per_wall, double cores,
            json_t *runs, int64_t parent_id, int64_t twin_id, double twin_ns,
            unsigned twin_features)
{
    double single_ns = kf_jnum (runs, "single_ns", 0);
    int64_t single_id = kf_jint (runs, "single_id");
    const char *lead = ", its own thread starts included";
    //  Round 17: a twin read by tags may differ in more than threads (a
    //  4 x 4 tile against a 5 x 4 one); the kernel's own time on one
    //  core is the same code, so it comes first. Round 22: taken beside
    //  other work, it is followed by the run's one-thread figures.
    if (own_ns > 0) {
        fputs (", its own thread starts included; ", f);
        kf_prompt_threads_own_text (f, ns, own_ns, load, cpu_per_wall);
        //  Round 49: "threads look to have bought about 3%" after "its
        //  threads hardly ran side by side ... what they would buy with
        //  free CPUs is not measured": no figure of it follows that.
        if (!kf_prompt_load_busy (load)
            || (cpu_per_wall > 0 && cpu_per_wall < KF_PROMPT_SIDE_BY_SIDE)
            || !((twin_id > 0 && twin_ns > 0) || kf_jnum (runs, "single_ns", 0) > 0)) {
            fputs (".", f);
            return;
        }
        lead = ". Its full time instead, its own thread starts included";
    }
    //  Round 15: "its threads bought 24%" set a two-thread kernel of
    //  ordinary stores against a one-thread one of streaming stores; the
    //  same body on one thread (candidate 3, 2.95 ms against 2.17 ms) was
    //  in the run. Where the run has the same design on one thread, that.
    if (twin_id > 0 && twin_ns > 0) {
        char one[32], words[KF_PROMPT_FEATURE_WORDS_MAX];
        kf_prompt_time_text (twin_ns, one, sizeof one);
        kf_prompt_feature_words (twin_features, words, sizeof words);
        fprintf (f, "%s, against %s for a kernel of like design "
                 "on one thread (candidate %lld, whose code's features read as the kernel to "
                 "improve's less its threads: %s; timed in full; the features cannot tell a "
                 "tile's shape): ", lead, one, (long long) twin_id,
                 *words ? words : "none of the other features either");
        if (!s_beyond_threads (f, ns, twin_ns, cores) && ns < twin_ns)
            fprintf (f, "threads look to have bought about %.0f%% of the call (that kernel "
                     "takes %.2f times as long).", 100 * (1 - ns / twin_ns), twin_ns / ns);
        else if (ns >= twin_ns)
            fprintf (f, "%.0f%% more time with threads, so its threads have not paid here.",
                     100 * (ns / twin_ns - 1));
        return;
    }
    //  Round 12: the like-for-like comparison is with its own parent where
    //  that runs on one thread and was timed in full.
    char key[24];
    snprintf (key, sizeof key, "%lld", (long long) parent_id);
    double parent_ns = kf_jnum (json_object_get (runs, "one_thread"), key, 0);
    if (parent_id > 0 && parent_ns > 0) {
        char took[32], one[32];
        kf_prompt_time_text (ns, took, sizeof took);
        kf_prompt_time_text (parent_ns, one, sizeof one);
        fprintf (f, "%s, against %s for its parent, candidate "
                 "%lld, on one thread: %.0f%% %s time, %s", lead, one, (long long) parent_id,
                 100 * fabs (1 - ns / parent_ns), ns < parent_ns ? "less" : "more",
                 ns < parent_ns ? "its threads and any other change together"
                                : "so its threads have not paid here");
        if (single_id != parent_id && single_ns > 0 && single_ns < ns) {
            kf_prompt_time_text (single_ns, one, sizeof one);
            fprintf (f, "; the run's fastest single-thread kernel, candidate %lld, takes %s",
                     (long long) single_id, one);
        }
        fputs (".", f);
        return;
    }
    if (!(single_ns > 0)) {
        fputs (", its own thread starts included; no single-thread kernel of this run has a "
               "full-protocol time to set it against yet.", f);
        return;
    }
    char took[32], one[32];
    kf_prompt_time_text (ns, took, sizeof took);
    kf_prompt_time_text (single_ns, one, sizeof one);
    //  Round 49: "its threads bought 4%" against a one-thread kernel of
    //  another design: the gap is the two kernels', not the threads'.
    if (ns < single_ns)
        fprintf (f, "%s: %s against the run's fastest single-thread kernel's %s (candidate "
                 "%lld), %.0f%% less, a gap of two kernels that may differ in more than "
                 "threads, not what its threads buy.", lead, took, one, (long long) single_id,
                 100 * (1 - ns / single_ns));
    else
        fprintf (f, "%s: it is no faster than the run's fastest "
                 "single-thread kernel, %s against %s (candidate %lld, which may differ in more "
                 "than threads), %.0f%% slower.", lead, took, one, (long long) single_id,
                 100 * (ns / single_ns - 1));
}

//  The parent of IN's kernel to improve, from the run's history; 0 when
//  not known.
static int64_t
s_parent_of (const kf_prompt_in_t *in)
{
    json_t *c = s_row (in->history, kf_jint (in->base, "id"));
    return c ? kf_jint (c, "parent_id") : kf_jint (in->base, "parent_id");
}

//  The run's kernels timed in full, threaded and not: the planner's
//  summary (IN->ideas "threads"), or where a prompt has none (a tuning
//  round plans no idea) the same read from IN->history, each kernel
//  threaded or not by the features read from its code when it was built
//  (kf_prompt_source_features). Caller's reference.
static json_t *
s_runs (const kf_prompt_in_t *in)
{
    json_t *runs = json_object_get (in->ideas, "threads");
    if (runs || !json_array_size (in->history))
        return json_incref (runs);
    int64_t single_id = 0, fast_id = 0;
    double single_ns = 0, fast_ns = 0;
    int count = 0;
    json_t *one_thread = json_object ();
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c) {
        json_t *features = json_object_get (c, "features");
        double ns = kf_jnum (c, "candidate_ns", 0);
        int64_t id = kf_jint (c, "id");
        if (strcmp (kf_jstr (c, "status"), "correct") || strcmp (kf_jstr (c, "fidelity"), "full")
            || !json_is_integer (features) || !(ns > 0) || !id)
            continue;
        if (json_integer_value (features) & (1 << KF_IDEA_THREADS)) {
            count++;
            if (!fast_id || ns < fast_ns) {
                fast_id = id;
                fast_ns = ns;
            }
            continue;
        }
        char key[24];
        snprintf (key, sizeof key, "%lld", (long long) id);
        json_object_set_new (one_thread, key, json_real (ns));
        if (!single_id || ns < single_ns) {
            single_id = id;
            single_ns = ns;
        }
    }
    runs = json_pack ("{s:i, s:o}", "threaded", count, "one_thread", one_thread);
    if (runs && single_id)
        json_object_update_new (runs, json_pack ("{s:I, s:f}", "single_id",
                                                 (json_int_t) single_id, "single_ns", single_ns));
    if (runs && fast_id)
        json_object_update_new (runs, json_pack ("{s:I, s:f}", "threaded_id",
                                                 (json_int_t) fast_id, "threaded_ns", fast_ns));
    return runs;
}

//  The run's like-for-like pair: its fastest threaded kernel timed in
//  full that has a one-thread twin (kf_prompt_threads_twin), with *NS,
//  the twin *ONE and its *ONE_NS; 0 where none has.
static int64_t
s_like_pair (const kf_prompt_in_t *in, double *ns, int64_t *one, double *one_ns)
{
    int64_t best = 0;
    size_t i;
    json_t *c;
    //  Its own one-core figure first (*ONE its own id): the same code.
    for (int own = 1; own >= 0 && !best; own--) {
        json_array_foreach (in->history, i, c) {
            double t = kf_jnum (c, "candidate_ns", 0), twin_ns;
            double own_ns = kf_prompt_threads_own_ns (c);
            json_t *features = json_object_get (c, "features");
            bool threaded = json_is_integer (features)
                            && (json_integer_value (features) & (1 << KF_IDEA_THREADS));
            if ((own ? !(own_ns > 0) : !threaded) || strcmp (kf_jstr (c, "status"), "correct")
                || strcmp (kf_jstr (c, "fidelity"), "full") || !(t > 0) || (best && t >= *ns))
                continue;
            if (own) {
                best = *one = kf_jint (c, "id");
                *ns = t;
                *one_ns = own_ns;
                continue;
            }
            int64_t twin = kf_prompt_threads_twin (in, c, &twin_ns, NULL);
            if (twin > 0) {
                best = kf_jint (c, "id");
                *ns = t;
                *one = twin;
                *one_ns = twin_ns;
            }
        }
    }
    return best;
}

//  A measured time below a prediction by this factor or more beats it.
#define S_BEATS 0.95

//  The paragraph for IN's kernel to improve (THREADED: it starts
//  threads) on a host of CORES whose thread start and join takes
//  START_US.
static void
s_cost (FILE *f, const kf_prompt_in_t *in, bool threaded, double start_us, double cores)
{
    double ns = kf_jnum (in->base, "candidate_ns", 0);
    double even_ns = kf_prompt_threads_even_ns (start_us, cores);
    char took[32], even[32];
    kf_prompt_time_text (even_ns, even, sizeof even);
    //  Round 24: a kernel whose threads took chunks from a shared counter
    //  read as one of fixed shares.
    if (threaded)
        fputs (kf_prompt_source_does (kf_jstr (in->base, "source"), in->language,
                                      KF_IDEA_DYNAMIC)
                   ? " The kernel to improve starts threads, which take their work as they go "
                     "(chunks from a shared counter or a dynamic schedule), not fixed shares."
                   : " The kernel to improve starts threads.",
               f);
    //  Round 19: "saves at most 50%" for a call bound by memory, where all
    //  cores read cold data 1.6 times as fast as one core, not twice.
    //  Round 28: the streaming copy first (a scan reads and writes), and
    //  all cores no faster than one said too (41.3 GB/s on both had
    //  dropped the sentence).
    json_t *d = json_array_get (json_object_get (in->hardware, "devices"), 0);
    kf_prompt_cores_gain_t mem;
    //  Round 21: not for a product or attention, whose work is their
    //  FMAs' (the paragraph stood in a GEMM's prompt of 604 MFLOP).
    kf_task_class_t tc = kf_prompt_task_class (in->spec);
    bool fma_bound = tc == KF_CLASS_MATMUL || tc == KF_CLASS_ATTENTION;
    bool memory_less = kf_prompt_memory_pair (d, &mem) && mem.all < cores * mem.one;
    double mem_gain = memory_less ? mem.all / mem.one : 1;
    //  Round 52: the copies' ratio (2.1x, so no bound below the cores'
    //  50%) stood for a memory task whose cold reads scaled 1.7x and whose
    //  writes did not: its own bytes at the cold rates, as the Target
    //  section estimates them, say what all cores buy it.
    double cold_one = 0, cold_all = 0;
    bool cold = kf_prompt_memory_cold (in->spec, d, &cold_one, &cold_all);
    if (cold) {
        memory_less = cold_one < cores * cold_all;
        mem_gain = cold_one / cold_all;
    }
    double gain = cores;
    const char *basis = NULL;
    //  Round 51: "a net gain of 48% ... at best" where all threads together
    //  reached 327 GFLOP/s, one core 230 (round 52: not the summed 459).
    double peak_one = kf_jnum (d, "peak_gflops_one_core", 0);
    double peak_all = kf_jnum (d, "peak_gflops_all_threads", kf_jnum (d, "peak_gflops", 0));
    bool peaks_less = fma_bound && peak_one > 0 && peak_all > peak_one
                      && peak_all < cores * peak_one * 0.95;
    //  Round 53: "at most 50%", then "at most about 30%" a sentence
    //  later read as two bounds of one thing: the first is the even
    //  split's, which a measured rate below lowers.
    fprintf (f, " What threads cost here: one thread's start and join takes %.1f us; over %.0f "
             "cores a call saves at most %.0f%% of its time%s and pays for %.0f start%s, so "
             "threads started in every call pay only where the call takes well over %s.",
             start_us, cores, 100 * (1 - 1 / cores),
             peaks_less || (memory_less && !fma_bound)
                 ? " where its work splits evenly (a measured rate below bounds it lower)"
                 : "",
             cores - 1, cores > 2 ? "s" : "", even);
    if (peaks_less) {
        gain = peak_all / peak_one;
        basis = " (the FMA peaks above)";
        fprintf (f, " A product's time is its multiply-adds, which divide over the cores as far "
                 "as the measured FMA peaks do: all threads together reached %.0f GFLOP/s "
                 "against one core's %.0f (%.2fx), so threads save at most about %.0f%% of a "
                 "call bound by them.", peak_all, peak_one, gain, 100 * (1 - 1 / gain));
    }
    //  ... and where they take all cores' saving, the read ratio alone
    //  (1.7x) is not this task's bound: the helper took it for one.
    else if (cold && !memory_less)
        fprintf (f, " This task's bytes take about %.3g ms at one core's cold rates (its reads' "
                 "and writes' times added, as one core's line buffers carry both) and %.3g ms "
                 "at all cores' (the two overlapping): %.2fx, more than the cores' even split, "
                 "so the memory does not lower the cores' bound of %.0f%%; the cold read rates "
                 "alone differ %.2fx, but one core's writes add to its time where all cores' "
                 "hide behind their reads.", cold_one, cold_all, mem_gain,
                 100 * (1 - 1 / cores),
                 kf_jnum (d, "read_cold_all_cores_gbs", 0)
                     / kf_jnum (d, "read_cold_one_core_gbs", 1));
    else if (memory_less && fma_bound)
        fputs (" A product's time is its multiply-adds, which divide over the cores; the "
               "memory's lower limit on that saving, which an elementwise call meets, is not "
               "this task's.", f);
    else if (memory_less) {
        fputs (" That is for work that divides over the cores; a call bound by memory ", f);
        if (mem_gain > 1.005)
            fprintf (f, "saves at most %.0f%%", 100 * (1 - 1 / mem_gain));
        else
            fputs ("saves nothing", f);
        if (cold)
            fprintf (f, ", as this task's bytes take about %.3g ms at one core's cold rates and "
                     "%.3g ms at all cores' (%.2fx; the Target section's estimate, by the cold "
                     "reads and the streaming writes, not by the copies).", cold_one, cold_all,
                     mem_gain);
        else
            fprintf (f, ", as all cores' %s was %.1f GB/s against one core's %.1f (%.2fx).",
                     mem.what, mem.all, mem.one, mem_gain);
        //  Round 31: "a call bound by memory saves nothing" stood in the
        //  prompts of a sine-and-sigmoid kernel whose arithmetic took
        //  several times its memory budget, and threads gained it 1.56-1.93x.
        //  Whether the kernel to improve is such a call, by the plan's rule.
        double cycles = 0, budget = 0, all = 0;
        kf_share_t sh;
        bool arith = in->base
                     && kf_search_idea_arith_bound (in->base, in->spec, in->hardware,
                                                    KF_TARGET_HOST, &cycles, &budget);
        if (arith) {
            fprintf (f, " The kernel to improve is not such a call: its time is about %.0f "
                     "cycles of each core per vector of output against a memory budget of "
                     "about %.0f (%.1f times; the figures of its position against the peaks)",
                     cycles, budget, cycles / budget);
            //  Round 38: or by its formula's estimated arithmetic.
            if (cycles < KF_SEARCH_IDEA_ARITH * budget)
                fprintf (f, ", and its formula's arithmetic alone takes about %.0f by the "
                         "Target section's estimate",
                         kf_search_idea_arith_estimate (in->spec, in->hardware, cycles));
            fputs (", so its time is its arithmetic, which divides over the cores.", f);
        }
        //  Round 37: "a call bound by memory saves at most 25%", then "a
        //  net gain of 50% ... at best" of a kernel of atan and exp (no
        //  memory task by its formula) that the plan called bound by
        //  memory: such a kernel by the plan's own rule saves as memory
        //  does.
        //  Round 39: "a net gain of 49% ... at best" of a one-thread
        //  kernel whose bytes crossed the bus at 1.02 times all cores'
        //  cold read rate: threads share that rate.
        else if (in->base && (sh = kf_search_idea_memory_share (in->base, in->spec,
                                                                in->hardware, KF_TARGET_HOST),
                              (all = sh.share) >= (threaded ? KF_SEARCH_IDEA_BOUND
                                                            : S_SHARE_SAID))) {
            //  Round 41: and a kernel at 90% of it, under the plan's bound,
            //  was promised 49%: no call goes under its bytes' time at
            //  all cores' rate, bound by memory or not.
            gain = fmax (1, fmin (all >= KF_SEARCH_IDEA_BOUND ? mem_gain : cores,
                                  1 / all));
            fprintf (f, " The kernel to improve moves its bytes at %.0f%% of %s already "
                     "(its position line), ", 100 * all, sh.rate_name);
            //  Round 41: "so they save nothing of its time" beside "its
            //  threads buy 22%", of a kernel whose threads made that rate.
            if (threaded)
                fputs ("with its threads: more threads or another split share that rate.", f);
            //  Round 47: "at most about 45%" beside "a call bound by memory
            //  saves at most 25%" read as two bounds of one thing.
            else if (gain > 1.005) {
                fprintf (f, "a rate threads share, so they save at most about %.0f%% of its "
                         "time", 100 * (1 - 1 / gain));
                //  Round 48: "(it is not bound by memory yet ...)" of a one-
                //  thread kernel at 94% of one core's reads and writes.
                kf_share_t one = kf_search_idea_one_core_share (in->base, in->spec,
                                                                in->hardware);
                if (all < KF_SEARCH_IDEA_BOUND && gain > mem_gain
                    && one.share >= KF_SEARCH_IDEA_BOUND)
                    fprintf (f, " (it is bound by one core's memory rate, at %.0f%% of %s: "
                             "all cores' is %.2f times that by the cold figures, more than "
                             "the %.2fx %s)", 100 * one.share,
                             one.mix ? "one core's reads and writes together" : one.rate_name,
                             one.share / all, mem_gain, cold ? "of its bytes above"
                                                            : "of the copies above");
                else if (all < KF_SEARCH_IDEA_BOUND && gain > mem_gain)
                    fputs (" (it is not bound by memory yet, so the bound above for a call "
                           "that is does not cap it)", f);
                fputs (".", f);
            }
            else
                fputs ("a rate threads share, so they save little of its time.", f);
        }
        else if (kf_prompt_memory_task (in->spec)
                 || kf_search_idea_budget_share_of (in->spec, in->hardware, cycles, budget)
                        >= KF_SEARCH_IDEA_BOUND)
            gain = mem_gain;
    }
    //  What the run's threaded kernels did against its single-thread
    //  best, timed in full (round 11: every one lost, and no prompt said).
    json_t *runs = s_runs (in);
    double single_ns = kf_jnum (runs, "single_ns", 0), fast_ns = kf_jnum (runs, "threaded_ns", 0);
    int64_t count = kf_jint (runs, "threaded");
    //  Round 30: "a call bound by memory saves nothing, as all cores'
    //  copy rate ... (0.98x)" beside a threaded kernel of the run 22%
    //  faster than its best on one thread: the host's figure is a
    //  prediction, the run's own pair a measurement of this task.
    if (memory_less && !fma_bound && single_ns > 0 && fast_ns > 0
        && fast_ns < single_ns * (mem_gain > 1 ? 1 / mem_gain : 1) * S_BEATS) {
        char t_fast[32], t_single[32];
        kf_prompt_time_text (fast_ns, t_fast, sizeof t_fast);
        kf_prompt_time_text (single_ns, t_single, sizeof t_single);
        fprintf (f, " This run measured more: its fastest kernel with threads (candidate %lld, "
                 "%s) takes %.0f%% less than its fastest on one thread (candidate %lld, %s), "
                 "both timed in full; for this task go by that pair, not by the host's copy "
                 "rates.", (long long) kf_jint (runs, "threaded_id"), t_fast,
                 100 * (1 - fast_ns / single_ns), (long long) kf_jint (runs, "single_id"),
                 t_single);
        if (kf_prompt_memory_task (in->spec)) {
            gain = fmin (cores, single_ns / fast_ns);
            basis = " (this run's pair above)";
        }
    }
    //  Round 10: generation 0 has no kernel to improve, and its threads
    //  attempts read nothing of the cost; the break-even stands alone.
    if (ns > 0) {
        kf_prompt_time_text (ns, took, sizeof took);
        fprintf (f, " The kernel to improve takes %s a call", took);
        if (threaded) {
            double twin_ns;
            unsigned features;
            int64_t twin = kf_prompt_threads_twin (in, in->base, &twin_ns, &features);
            s_threaded (f, ns, kf_prompt_threads_own_ns (in->base),
                        json_object_get (in->base, "host_load"),
                        kf_prompt_threads_side_by_side (in->base), cores, runs,
                        s_parent_of (in), twin, twin_ns, features);
            kf_prompt_threads_load (f, in, in->base, twin);
            //  Round 38: no prompt offered work taken as it goes where
            //  fixed shares hardly ran side by side; that took candidate
            //  5's 1.02 CPU a second to candidate 11's 1.41.
            double side = kf_prompt_threads_side_by_side (in->base);
            if (side > 0 && side < KF_PROMPT_SIDE_BY_SIDE
                && !kf_prompt_source_does (kf_jstr (in->base, "source"), in->language,
                                           KF_IDEA_DYNAMIC))
                fputs (" Its threads take fixed shares: where other work holds a CPU, a "
                       "fixed share waits for it while the others finish early; threads that "
                       "take chunks from a shared counter as they go let whichever CPU is "
                       "free do the waiting share's work.", f);
        }
        else
            s_one_thread (f, start_us, cores, gain, basis, ns, even_ns);
        //  Only near the break-even (round 13: "4.18 ms a call, so a
        //  successor of it gains even less" where a start costs 1% of it).
        double best_ns = kf_jnum (in->best, "candidate_ns", 0);
        if (best_ns > 0 && best_ns < ns && best_ns < KF_PROMPT_THREADS_NEAR * even_ns
            && kf_jint (in->best, "id") != kf_jint (in->base, "id")) {
            kf_prompt_time_text (best_ns, took, sizeof took);
            fprintf (f, " The run's best kernel takes %s a call, so a successor of it gains "
                     "even less from threads started per call.", took);
        }
    }
    char one[32];
    int64_t pair_one = 0;
    double pair_ns = 0, pair_one_ns = 0;
    int64_t pair = s_like_pair (in, &pair_ns, &pair_one, &pair_one_ns);
    //  Round 17: "threads have bought nothing so far" set a threaded dot
    //  product (3.40 ms) against a one-thread register tile (3.21 ms),
    //  while the run held the like-for-like pair (2.1x). A pair first;
    //  designs against each other only as what they are.
    //  The kernel to improve's own pair is said above already.
    bool said = threaded && pair > 0 && pair == kf_jint (in->base, "id");
    if (pair > 0 && !said && pair_one == pair) {
        json_t *load = json_object_get (s_row (in->history, pair), "host_load");
        kf_prompt_time_text (pair_ns, took, sizeof took);
        fprintf (f, " %s in this run: candidate %lld starts threads and takes %s a call; ",
                 kf_prompt_load_busy (load) ? "Nearest to like for like" : "Like for like",
                 (long long) pair, took);
        kf_prompt_threads_own_text (f, pair_ns, pair_one_ns, load,
                                    kf_prompt_threads_side_by_side (s_row (in->history, pair)));
        fputs (".", f);
    }
    else if (pair > 0 && !said) {
        kf_prompt_time_text (pair_ns, took, sizeof took);
        kf_prompt_time_text (pair_one_ns, one, sizeof one);
        fprintf (f, " Nearest to like for like in this run: candidate %lld starts threads and "
                 "takes %s a call; candidate %lld, a kernel of like design whose code's "
                 "features read as its less the threads, takes %s on one thread (both timed in "
                 "full; the features cannot tell a tile's shape): ",
                 (long long) pair, took, (long long) pair_one, one);
        if (!s_beyond_threads (f, pair_ns, pair_one_ns, cores) && pair_ns < pair_one_ns)
            fprintf (f, "threads look to have bought about %.0f%% of the call.",
                     100 * (1 - pair_ns / pair_one_ns));
        else if (pair_ns >= pair_one_ns)
            fprintf (f, "threads look to have cost about %.0f%% more time.",
                     100 * (pair_ns / pair_one_ns - 1));
    }
    else if (!pair && count > 0 && single_ns > 0 && fast_ns >= single_ns) {
        kf_prompt_time_text (fast_ns, took, sizeof took);
        kf_prompt_time_text (single_ns, one, sizeof one);
        fprintf (f, " No kernel of this run is timed both with and without its threads yet. "
                 "Across designs: the %lld kernel%s of this run that start%s threads, timed in "
                 "full, %s slower than its fastest single-thread kernel (candidate %lld, %s a "
                 "call); %s candidate %lld, takes %s. That sets different designs against each "
                 "other: it does not say what a second thread costs one kernel.",
                 (long long) count, count == 1 ? "" : "s",
                 count == 1 ? "s" : "", count == 1 ? "was" : "were all",
                 (long long) kf_jint (runs, "single_id"), one,
                 count == 1 ? "that one," : "the fastest of them,",
                 (long long) kf_jint (runs, "threaded_id"), took);
    }
    //  Round 14: a one-thread kernel's tuning prompt said nothing of a
    //  threaded kernel of the run 1.5 times faster.
    else if (!pair && !threaded && count > 0 && single_ns > 0 && fast_ns > 0) {
        kf_prompt_time_text (fast_ns, took, sizeof took);
        kf_prompt_time_text (single_ns, one, sizeof one);
        fprintf (f, " Across designs in this run: the fastest kernel that starts threads, "
                 "candidate %lld, takes %s a call, %.0f%% less than the fastest single-thread "
                 "kernel (candidate %lld, %s), timed in full. That sets different designs "
                 "against each other: it does not say what a second thread gains one kernel.",
                 (long long) kf_jint (runs, "threaded_id"), took,
                 100 * (1 - fast_ns / single_ns), (long long) kf_jint (runs, "single_id"), one);
    }
    json_decref (runs);
}

void
kf_prompt_thread_cost (FILE *f, const kf_prompt_in_t *in, const char *idea)
{
    double start_us, cores;
    bool threaded = in->base && kf_prompt_source_does (kf_jstr (in->base, "source"),
                                                       in->language, KF_IDEA_THREADS);
    bool idea_threads = kf_prompt_idea_feature (idea) == KF_IDEA_THREADS;
    if ((idea_threads || threaded) && kf_prompt_threads_host (in->hardware, &start_us, &cores))
        s_cost (f, in, threaded, start_us, cores);
    //  Round 25's notes: threads handed although the start figures found
    //  all cores no faster than one; said with the figures.
    kf_prompt_cores_gain_t gain;
    if (idea_threads && kf_prompt_cores_no_gain (in->hardware, in->spec, &gain))
        kf_prompt_cores_gain_text (f, &gain);
}

//  Round 14: the tuning prompt of a one-thread kernel (3.25 ms a call,
//  where a two-thread kernel of the run was 1.5 times faster) said
//  nothing of threads, and the model added NTHREADS=1,2 on its own.
void
kf_prompt_thread_param (FILE *f, const kf_prompt_in_t *in)
{
    json_t *d = json_array_get (json_object_get (in->hardware, "devices"), 0);
    double cores = kf_jnum (d, "cores", 0);
    const char *source = kf_jstr (in->base, "source");
    if (!*source || cores < 2 || kf_prompt_source_does (source, in->language, KF_IDEA_THREADS))
        return;
    long long id = (long long) kf_jint (in->base, "id");
    double start_us, host_cores;
    bool known = kf_prompt_threads_host (in->hardware, &start_us, &host_cores);
    if (known && kf_prompt_threads_lose (start_us, cores, kf_jnum (in->base, "candidate_ns", 0),
                                         false)) {
        fprintf (f, "Candidate %lld starts no threads, and threads started in each of its "
                 "calls would lose on this host: leave the thread count out of the template.",
                 id);
        s_cost (f, in, false, start_us, cores);
        fputs ("\n", f);
        return;
    }
    fprintf (f, "Candidate %lld starts no threads, and this host has %.0f cores: the template "
             "may make the thread count a parameter, with 1 as its default (#define NTHREADS "
             "1) so that the all-defaults point is still candidate %lld on one thread, and "
             "the counts worth trying after it (NTHREADS=1,2", id, cores, id);
    long c = (long) cores;
    if (c / 2 > 2)
        fprintf (f, ",%ld", c / 2);
    if (c > 2)
        fprintf (f, ",%ld", c);
    fputs (").", f);
    if (known)
        s_cost (f, in, false, start_us, cores);
    fputs ("\n", f);
}
