/*  kf_prompt_noise.c - how far a figure can be trusted: the run's
 *  measured noise, the host's load while each kernel was timed, and the
 *  screen figures against the full ones (kf_prompt_target.h).
 *
 *  Round 5 of the model in the loop: kernels of the same arithmetic
 *  measured 1.80 and 2.7 ms while a CI suite ran beside the run, a
 *  screen-against-full figure rested on one or two candidates, and the
 *  host's condition changed mid-run without any outcome saying which it
 *  was timed under.
 */
#include "kf_prompt_target.h"
#include "kf_prompt_class.h"
#include "kf_json.h"
#include "kf_lineage.h"
#include "kf_load_busy.h"
#include <math.h>
#include <stdio.h>
#include <string.h>



//  The run's screen-against-full disagreement so far (kf_prompt_hardware's
//  screen_full_gap: the largest ratio, either way, between the screen
//  and the full-protocol speedup of one candidate).
static void
s_screen_gap (FILE *f, json_t *hardware)
{
    double gap = kf_jnum (hardware, "screen_full_gap", 0);
    double n = kf_jnum (hardware, "screen_full_count", 0);
    if (!(gap >= 1) || !(n >= 1))
        return;
    //  Round 5: "up to 1.1x" rested on one or two candidates and read as
    //  a bound; a full protocol later found 9.72x screened at 6.42x.
    if (n < 3) {
        fprintf (f, "Screen against full timing in this run so far: %s timed both ways, "
                 "whose short screen figure and full-protocol figure differed by %s%.2fx; "
                 "%s bound%s nothing, and a screen figure may be off by more.\n",
                 n == 1 ? "one candidate" : "two candidates", n == 1 ? "" : "up to ", gap,
                 n == 1 ? "one pair" : "two pairs", n == 1 ? "s" : "");
        return;
    }
    fprintf (f, "Screen against full timing in this run so far: the short screen figure and "
             "the full-protocol figure of one kernel differed by up to %.2fx (the largest "
             "ratio, either way, among the %.0f candidates timed both ways), so a screen "
             "figure can be off by that much, or more.", gap, n);
    //  Round 11: one kernel's two timings came out a median 16% apart,
    //  where each median's own samples said +/-2-4%. Comparisons of the
    //  search take the larger (kf_lineage_band).
    //  Round 16: a band at the median calls half of one kernel's pairs
    //  changed; the search's verdicts take the ratio 9 in 10 stayed within.
    double typical = kf_jnum (hardware, "screen_full_typical", 0);
    double band = kf_jnum (hardware, "screen_full_band", 0);
    //  Round 43: below KF_LINEAGE_REPEAT_TAIL pairs one outlier does not
    //  set the band (kf_lineage_repeat_gaps), and the text says so.
    if (typical >= 1 && band >= 1)
        fprintf (f, " The median of those ratios is %.2fx and the largest %.2fx: two timings "
                 "of one kernel in this run typically differ by %.0f%% and have differed by "
                 "%.0f%%, 9 times in 10 by at most %.0f%%%s, so two kernels' figures closer "
                 "than that are not told apart (the search calls such a child within noise of "
                 "its parent), and a screen figure alone can be as far off as the largest.", typical, gap, 100 * (typical - 1), 100 * (gap - 1),
                 100 * (band - 1), n < KF_LINEAGE_REPEAT_TAIL
                 ? " (an estimate from so few pairs, which one outlying pair does not set)" : "");
    fputs ("\n", f);
}

//  A screen-to-full spread past which a sweep's small steps are noise.
#define S_SWEEP_COARSE 1.25

void
kf_prompt_screen_sweep (FILE *f, json_t *hardware)
{
    double gap = kf_jnum (hardware, "screen_full_gap", 0);
    double n = kf_jnum (hardware, "screen_full_count", 0);
    double typical = kf_jnum (hardware, "screen_full_typical", 0);
    if (!(gap >= 1) || !(n >= 1))
        return;
    //  Round 15: one kernel's screen figure was 1.46x off its full one
    //  while the run's earlier prompts quoted "up to 1.22x", and a sweep's
    //  points are ranked by their screens.
    fputs ("Screen against full in this run so far: the screen and full-protocol figures of "
           "one kernel differed by ", f);
    if (typical >= 1)
        fprintf (f, "%.2fx at the median and up to %.2fx", typical, gap);
    else
        fprintf (f, "%s%.2fx", n >= 2 ? "up to " : "", gap);
    //  Round 43: "not separated within 1.34x" came from one outlying
    //  pair beside a median of 1.02x; the band (kf_lineage_repeat_gaps)
    //  is what one outlier does not set.
    double band = kf_jnum (hardware, "screen_full_band", 0);
    double apart = band >= 1 ? band : gap;
    fprintf (f, " (over the %.0f candidate%s timed both ways%s). The points of this sweep are "
             "ranked by their screen figures and only the fastest go on to the full protocol, "
             "so points whose screen figures lie within %.2fx of each other%s are not "
             "separated: which of them reaches the full protocol is as much the screen's noise "
             "as their speed.", n, n == 1 ? "" : "s", n < 3 ? "; too few to bound the spread, "
             "which can be larger" : "", apart, band >= 1 ? " (the ratio 9 in 10 of those "
             "pairs stayed within)" : "");
    //  Round 34: sweeps of one-parameter steps a few per cent apart, under
    //  a 1.87x spread, were ranked by the load of the moment, and the
    //  prompt said so but still asked for small steps. Round 36: by the
    //  median gap where there is one ("more than 74%" for a kernel at 83%
    //  of the peak came from one outlier beside a median of 1.04x).
    //  Round 44: by the band where there is one: one outlier does not set
    //  it (kf_lineage_repeat_gaps), and a +/-54% band beside a median of
    //  1.19x left the small steps unsaid.
    double spread = band >= 1 ? band : typical >= 1 ? typical : gap;
    //  Round 45: the choices named a product's (tile shape, block size,
    //  loop order) to an elementwise kernel, whose moves are its threads.
    bool ew = kf_prompt_task_class (json_object_get (hardware, "task")) == KF_CLASS_ELEMENTWISE;
    if (spread >= S_SWEEP_COARSE)
        fprintf (f, " So spend the points on choices that could move the time by more than "
                 "%.0f%% (%s), fewer of them if need be, not on small steps of one parameter: "
                 "points a few per cent apart are ranked by the noise here.", 100 * (spread - 1),
                 ew ? "another thread count, fixed shares against chunks taken as they go, "
                      "streaming stores on or off"
                    : "another tile shape or block size, another thread count, another loop "
                      "order");
    fputs ("\n", f);
}

bool
kf_prompt_load_text (json_t *load, json_t *cond, char *buf, size_t size)
{
    buf[0] = 0;
    double cpus = kf_jnum (load, "cpus", 0);
    double runnable = kf_jnum (load, "runnable_others", -1);
    double share = kf_jnum (load, "others_cpu_share", -1);
    size_t n = 0;
    if (runnable >= 0 && cpus > 0)
        n += (size_t) snprintf (buf, size, "timed with %.1f other runnable task%s on %.0f CPU%s",
                                runnable, runnable == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s");
    if (share >= 0 && n < size)
        n += (size_t) snprintf (buf + n, size - n, "%sother processes took %.0f%% of the CPUs' "
                                "time while it was timed", n ? " (" : "timed while ",
                                100 * share);
    if (n && runnable >= 0 && share >= 0 && n < size)
        n += (size_t) snprintf (buf + n, size - n, ")");
    //  The figures are over the samples in which neither side waited for
    //  a CPU (exec-worker/kf_host_wait.h): the load ran, but not in them.
    if (n && kf_prompt_load_undisturbed (load) && n < size)
        n += (size_t) snprintf (buf + n, size - n, ", its figures taken over the samples in "
                                "which neither it nor the reference waited for a CPU");
    //  Round 27: under 62-86% load two full timings of one kernel differed
    //  up to 3.5x, and nothing told how much of a figure was waiting. The
    //  kernel's own threads' waits for a CPU (run_delay) over its timed
    //  calls say it; summed over threads, so past 100% with several.
    else if (n && kf_jnum (load, "cand_wait_share", 0) >= 0.05 && n < size)
        n += (size_t) snprintf (buf + n, size - n, ", its own threads waiting for a CPU for "
                                "%.0f%% of its timed calls' time (summed over its threads): "
                                "that much of its figure is the host's, not its code's",
                                100 * kf_jnum (load, "cand_wait_share", 0));
    if (json_is_object (cond) && n < size) {
        double c = kf_jnum (cond, "compile_workers_beside", 0);
        double e = kf_jnum (cond, "exec_workers_beside", 0);
        if (c + e >= 1)
            n += (size_t) snprintf (buf + n, size - n, "%sthe exec host shared with %.0f "
                                    "compile and %.0f other exec worker%s", n ? "; " : "",
                                    c, e, e == 1 ? "" : "s");
        else
            n += (size_t) snprintf (buf + n, size - n, "%sno other worker registered on the "
                                    "exec host", n ? "; " : "");
    }
    return kf_prompt_load_busy (load);
}

double
kf_prompt_load_others (json_t *load)
{
    //  Other processes' CPU seconds over the timing's wall seconds: how
    //  many cores' worth they kept busy on average.
    double cpus = kf_jnum (load, "cpus", 0), wall = kf_jnum (load, "wall_s", 0);
    if (kf_jhas_num (load, "others_cpu_s") && wall > 0)
        return kf_jnum (load, "others_cpu_s", 0) / wall;
    if (kf_jhas_num (load, "others_cpu_share") && cpus > 0)
        return kf_jnum (load, "others_cpu_share", 0) * cpus;
    return -1;
}

size_t
kf_prompt_load_cores (json_t *load, bool threaded, char *buf, size_t size)
{
    buf[0] = 0;
    double cpus = kf_jnum (load, "cpus", 0), allowed = kf_jnum (load, "cpus_allowed", 0);
    double others = kf_prompt_load_others (load);
    size_t n = 0;
    if (others >= 0)
        n += (size_t) snprintf (buf, size, "other work took %.1f of a core on average", others);
    if (threaded && allowed >= 1 && n < size) {
        n += (size_t) snprintf (buf + n, size - n, "%sthe kernel could use %.0f CPU%s",
                                n ? " and " : "", allowed, allowed == 1 ? "" : "s");
        if (allowed == 1 && n < size)
            n += (size_t) snprintf (buf + n, size - n, ", so its threads took turns on one");
        else if (others >= 0 && allowed >= cpus && n < size)
            n += (size_t) snprintf (buf + n, size - n, ", so at most about %.1f CPUs' time "
                                    "was left to its threads", fmax (allowed - others, 0));
    }
    return n < size ? n : size - 1;
}

bool
kf_prompt_load_undisturbed (json_t *load)
{
    return json_is_true (json_object_get (load, "undisturbed_only"));
}

bool
kf_prompt_load_busy (json_t *load)
{
    if (kf_prompt_load_undisturbed (load))
        return false;
    return kf_load_busy (kf_jnum (load, "runnable_others", -1),
                         kf_jnum (load, "others_cpu_share", -1));
}

//  Timings of the run with other processes taking this share of the
//  CPUs' time or more, and how many of them, that make the run heavily
//  loaded (at least half its timings, two at the least).
#define S_HEAVY_SHARE 0.5
#define S_HEAVY_MIN 2

//  Round 31: other processes took 50-70% of the CPUs in most timings,
//  screen and full figures of one kernel differed by up to 1.74x, and
//  the prompts said the load of every figure but not what to make of it.
static void
s_heavy_load (FILE *f, json_t *hardware)
{
    json_t *rn = json_object_get (hardware, "run_noise");
    double heavy = kf_jnum (rn, "heavy_n", 0), n = kf_jnum (rn, "load_n", 0);
    if (heavy < S_HEAVY_MIN || 2 * heavy < n)
        return;
    fprintf (f, "Heavy load: %.0f of this run's %.0f timings were taken while other processes "
             "took %.0f%% of the CPUs' time or more (up to %.0f%%). Under such load a figure "
             "tells as much of the load as of the code", heavy, n, 100 * S_HEAVY_SHARE,
             100 * kf_jnum (rn, "share_max", 0));
    double gap = kf_jnum (hardware, "screen_full_gap", 0);
    if (gap >= 1 && kf_jnum (hardware, "screen_full_count", 0) >= 1)
        fprintf (f, " (two timings of one kernel here have differed by %.2fx)", gap);
    fputs (". So: set a kernel against one timed under like load (each outcome below names "
           "its load), not against the best figure of the run; take a gain smaller than that "
           "spread as no gain either way; prefer a change that should win by a wide margin "
           "(fewer passes over memory, vectorised or cheaper math, better blocking) to a small "
           "retuning this noise cannot resolve; and read a threaded kernel's figure as what "
           "the CPUs the load left gave it, which a quiet host would better.\n", f);
}

//  The run's own measured noise and the host's load over its timings
//  (kf_prompt_hardware's run_noise; round 5: the noise wording rested on
//  one or two candidates, and the host's state changed mid-run unsaid).
static void
s_run_noise (FILE *f, json_t *hardware)
{
    json_t *rn = json_object_get (hardware, "run_noise");
    double n = kf_jnum (rn, "n", 0);
    if (n >= 1 && kf_jhas_num (rn, "spread_median"))
        fprintf (f, "Timing noise measured in this run: over %.0f timed correct kernel%s, the "
                 "speedup's own samples spread by a median of +/-%.1f%% and at most +/-%.1f%% "
                 "(half the p10-p90 width of the kernel's and the reference's samples, in "
                 "quadrature)%s.\n", n, n == 1 ? "" : "s", 100 * kf_jnum (rn, "spread_median", 0),
                 100 * kf_jnum (rn, "spread_max", 0),
                 n < 3 ? "; too few timings to say how far one kernel's figures vary from run "
                         "to run, which can be more" : "");
    double ln = kf_jnum (rn, "load_n", 0);
    if (ln >= 1) {
        double lo = kf_jnum (rn, "load_min", 0), hi = kf_jnum (rn, "load_max", 0);
        fprintf (f, "Host load during this run's timings: %.1f to %.1f other runnable tasks "
                 "on %.0f CPUs beside the timing (over %.0f timing%s).", lo, hi,
                 kf_jnum (rn, "cpus", 1), ln, ln == 1 ? "" : "s");
        if (hi - lo >= 0.5)
            fputs (" Kernels timed under different load are not comparable by the ratio of "
                   "their figures: a kernel timed beside more work reads slower than it is; "
                   "each outcome below names the load it was timed under.", f);
        fputs ("\n", f);
    }
    s_heavy_load (f, hardware);
    double shared = kf_jnum (rn, "shared_n", 0), alone = kf_jnum (rn, "alone_n", 0);
    if (shared >= 1 && alone >= 1)
        fprintf (f, "The exec host's condition changed during this run: %.0f timing%s ran "
                 "with other workers registered on it and %.0f with none; each outcome below "
                 "says which it had.\n", shared, shared == 1 ? "" : "s", alone);
}

void
kf_prompt_run_noise (FILE *f, json_t *hardware)
{
    s_run_noise (f, hardware);
    s_screen_gap (f, hardware);
}

//  Half the p10-p90 width relative to the median, or -1 when not known.
static double
s_spread (json_t *t)
{
    double med = kf_jnum (t, "median_ns", 0);
    if (!(med > 0) || !kf_jhas_num (t, "p10_ns") || !kf_jhas_num (t, "p90_ns"))
        return -1;
    return (kf_jnum (t, "p90_ns", 0) - kf_jnum (t, "p10_ns", 0)) / (2 * med);
}

//  Round 10: kernels that took fresh scratch memory in each call lost
//  their time to page faults, and no figure said so; the host judge
//  counts the faults of the kernel's process over its timed calls.
static void
s_faults (FILE *f, json_t *k)
{
    json_t *t = json_object_get (k, "timing_candidate");
    if (!kf_jhas_num (t, "minor_faults_per_call"))
        return;
    double n = kf_jnum (t, "minor_faults_per_call", 0);
    if (n < 0.5)
        fputs ("Page faults: none in the timed calls (every page this kernel touched was "
               "mapped already).\n", f);
    else
        //  Round 13: 64 a call beside a scratch text that said blocks
        //  come back with their pages in; the usual causes are named
        //  (scratch only when it grows: kf_scratch.h keeps its pages).
        fprintf (f, "Page faults: %.0f minor page faults per timed call in this kernel's "
                 "process: memory mapped and touched afresh in every call (given back to "
                 "the system between calls, or first touched there), each fault a trip into "
                 "the operating system that also zeroes the new memory. The usual causes: "
                 "threads started in each call (each new thread faults in every page of stack "
                 "it touches, since glibc gives an exited thread's stack pages back), "
                 "scratch blocks that grow from call to call (scratch_alloc maps memory only "
                 "for what earlier calls did not take), or memory the kernel maps itself.\n",
                 n);
}

void
kf_prompt_noise_line (FILE *f, json_t *k)
{
    s_faults (f, k);
    json_t *tc = json_object_get (k, "timing_candidate");
    json_t *tr = json_object_get (k, "timing_reference");
    double c = s_spread (tc), r = s_spread (tr);
    if (c < 0)
        return;
    //  A reference of PyTorch's is one figure (its median) without
    //  samples: its spread is not known and not added.
    char ref[160] = "";
    if (r >= 0)
        snprintf (ref, sizeof ref, " and the reference's by +/-%.1f%%", 100 * r);
    //  Independent spreads add in quadrature; the paired ratio of a
    //  sample's two figures varies by about that much.
    double s = sqrt (c * c + (r > 0 ? r * r : 0));
    fprintf (f, "Noise: the timing samples of this kernel spread by +/-%.1f%%%s (half the "
             "width between the 10th and 90th percentile sample, over the median", 100 * c, ref);
    if (r >= 0)
        fprintf (f, "; the two added in quadrature give +/-%.1f%%", 100 * s);
    fputs (r >= 0 ? ")" : "); the reference's time is one figure, measured once", f);
    //  Round 11: that spread of single samples was quoted as the noise of
    //  the figures ("+/-190%" for two figures 5% apart). A figure is the
    //  median of its samples, known to about twice its standard error.
    double n = kf_jnum (tc, "samples", 0);
    if (n >= 2) {
        double m = kf_lineage_noise (tc, r >= 0 ? tr : NULL);
        fprintf (f, ". This kernel's figure is the median of %.0f samples, which lies within "
                 "about +/-%.1f%% of what the same timing would give again (twice the "
                 "median's standard error%s), so speedups within about +/-%.1f%% of each "
                 "other are not a real difference; figures timed under other load or another "
                 "state of the host can differ by more.\n", n, 100 * m,
                 r >= 0 ? ", the reference's added in quadrature" : "", 100 * (m > 0.01 ? m : 0.01));
    } else
        fprintf (f, ", so speedups within about +/-%.1f%% of each other are not a real "
                 "difference.\n", 100 * s);
    //  Round 5: the host's load and condition while it was timed.
    char load[400];
    json_t *l = json_object_get (k, "host_load"), *cond = json_object_get (k, "host_condition");
    bool loaded = kf_prompt_load_text (l, cond, load, sizeof load);
    if (*load)
        fprintf (f, "This kernel was %s%s.\n", load,
                 loaded ? ": its figures read slower than on a quiet host, and its ratio to a "
                          "kernel timed under other load is not a like-for-like comparison"
                        : "");
}

