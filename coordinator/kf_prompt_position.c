/*  kf_prompt_position.c - where a task's work and a timed kernel stand
 *  against the target's measured figures (declared in
 *  kf_prompt_target.h).
 *
 *  The task side: its traffic at one core's copy rates, with ordinary and
 *  with streaming stores, in milliseconds (round 11: 41.6 GB/s read plus
 *  write beside 42.0 GB/s streaming read as one figure), then at the cold
 *  read rates (kf_prompt_budget.c; round 13), and the libm
 *  calls its formula makes per kernel call set against its bound (round
 *  11: 196,608 scalar tanhf calls cost about as much as the whole matrix
 *  product, and no prompt said so). The kernel side: its position line,
 *  with the operation count derived from the shapes (a matrix product)
 *  or from the formula's code (an elementwise task) where the task
 *  states none, its bytes with the read each ordinary store makes of
 *  its line first, and its cycles per vector of output (round 15).
 */
#include "kf_prompt_target.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_class.h"
#include "kf_prompt_arith.h"
#include "kf_prompt_epilogue.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_layout.h"
#include "kf_prompt_threads.h"
#include "kf_json.h"
#include "kf_rates.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

//  An assumed cost of one scalar libm call of a transcendental (glibc's
//  tanhf, expf, erff, logf take some tens of cycles; the exec worker
//  measures none), stated as an assumption wherever it is used.
#define S_LIBM_CYCLES 40

static double
s_dtype_bytes (const char *dtype)
{
    if (!strcmp (dtype, "f64") || !strcmp (dtype, "i64"))
        return 8;
    if (!strcmp (dtype, "f16") || !strcmp (dtype, "bf16"))
        return 2;
    return 4;
}

double
kf_prompt_tensor_bytes (json_t *tensor)
{
    return s_dtype_bytes (kf_jstr (tensor, "dtype")) * kf_prompt_tensor_elements (tensor);
}

double
kf_prompt_side_bytes (json_t *spec, const char *list)
{
    double bytes = 0;
    size_t i;
    json_t *t;
    json_array_foreach (json_object_get (spec, list), i, t)
        bytes += kf_prompt_tensor_bytes (t);
    return bytes;
}

double
kf_prompt_output_elements (json_t *spec)
{
    double n = 0;
    size_t i;
    json_t *t;
    json_array_foreach (json_object_get (spec, "outputs"), i, t)
        n += kf_prompt_tensor_elements (t);
    return n;
}

//  A count as people read it: "302 million", "4194304".
static const char *
s_count (double v, char *buf, size_t size)
{
    if (v >= 1e9)
        snprintf (buf, size, "%.3g billion", v / 1e9);
    else if (v >= 1e6)
        snprintf (buf, size, "%.3g million", v / 1e6);
    else
        snprintf (buf, size, "%.0f", v);
    return buf;
}

//  The time SPEC's traffic takes at device D's one-core copy rates, in
//  ms: *ORDINARY with ordinary stores (N + 2M at the traffic rate, or N +
//  M at the memcpy rate where no traffic rate was measured), *STREAM with
//  streaming stores (N + M), 0 where not known. False when neither is.
static bool
s_traffic_ms (json_t *spec, json_t *d, double *ordinary, double *stream)
{
    double n = kf_prompt_side_bytes (spec, "inputs"), m = kf_prompt_side_bytes (spec, "outputs");
    double copy = kf_jnum (d, "copy_one_core_gbs", 0);
    double traffic = kf_jnum (d, "copy_one_core_traffic_gbs", 0);
    double streaming = kf_jnum (d, "copy_stream_one_core_gbs", 0);
    *ordinary = !(n > 0 && m > 0) ? 0
                : traffic > 0     ? (n + 2 * m) / traffic * 1e-6
                : copy > 0        ? (n + m) / copy * 1e-6
                                  : 0;
    *stream = n > 0 && m > 0 && streaming > 0 ? (n + m) / streaming * 1e-6 : 0;
    return *ordinary > 0 || *stream > 0;
}

void
kf_prompt_task_traffic_line (FILE *f, json_t *spec, json_t *d)
{
    double ordinary, stream;
    if (!s_traffic_ms (spec, d, &ordinary, &stream))
        return;
    double n = kf_prompt_side_bytes (spec, "inputs"), m = kf_prompt_side_bytes (spec, "outputs");
    char bn[32], bm[32], bt[32];
    fprintf (f, "  This task reads N = %s and writes M = %s: at these one-core "
             "(warm-cache) copy rates that takes", kf_rates_bytes (n, bn, sizeof bn),
             kf_rates_bytes (m, bm, sizeof bm));
    if (ordinary > 0 && kf_jnum (d, "copy_one_core_traffic_gbs", 0) > 0)
        fprintf (f, " about %.3g ms with ordinary stores (N + 2M = %s of traffic at %.1f GB/s)",
                 ordinary, kf_rates_bytes (n + 2 * m, bt, sizeof bt),
                 kf_jnum (d, "copy_one_core_traffic_gbs", 0));
    else if (ordinary > 0)
        fprintf (f, " about %.3g ms with memcpy's stores (N + M = %s at %.1f GB/s)", ordinary,
                 kf_rates_bytes (n + m, bt, sizeof bt), kf_jnum (d, "copy_one_core_gbs", 0));
    if (ordinary > 0 && stream > 0)
        fputs (" and", f);
    if (stream > 0)
        fprintf (f, " about %.3g ms with streaming stores (N + M = %s at %.1f GB/s)", stream,
                 kf_rates_bytes (n + m, bt, sizeof bt), kf_jnum (d, "copy_stream_one_core_gbs", 0));
    if (ordinary > 0 && stream > 0) {
        double saved = 1 - stream / ordinary;
        if (saved >= 0.005)
            fprintf (f, ": by these figures streaming stores save about %.0f%% of the time here",
                     100 * saved);
        else if (saved <= -0.005)
            fprintf (f, ": by these figures streaming stores take about %.0f%% longer here",
                     -100 * saved);
        else
            fputs (": by these figures streaming stores save no time here", f);
    }
    //  Round 13: the rates above are warm; the timing's are cold.
    kf_prompt_task_cold_text (f, n, m, d);
    fputs (".", f);
    //  Round 18: the saving by the measured copies (11%) and by the cold
    //  floors (2.17 against 2.89 ms, 25%) stood side by side, unreconciled.
    //  Round 23: called floors, they read as bounds, and a kernel of
    //  ordinary stores came in at 6.21 ms under "7.63 ms".
    if (ordinary > 0 && stream > 0 && m > 0 && kf_prompt_cold_ms (n, m, d, false) > 0)
        fprintf (f, " The two savings differ because the cold estimates count bytes alone, the "
                 "writes at the %s rate, while the copies above time each kind of store as it "
                 "runs: take the copies' figure for what streaming stores save, and the "
                 "estimates for about how far a kernel is from done. They are estimates, not "
                 "bounds: a core overlaps its reads and writes in part, so a kernel may come in "
                 "under them.",
                 kf_prompt_write_gbs (d, false) > 0 ? "streaming-store write" : "read");
    fputs ("\n", f);
}

void
kf_prompt_task_libm_line (FILE *f, json_t *spec, json_t *d)
{
    kf_formula_t fm;
    if (!kf_prompt_formula (spec, &fm) || fm.calls <= 0)
        return;
    kf_task_class_t c = kf_prompt_task_class (spec);
    long long mnk[3] = { 0, 0, 0 };
    double flops = c == KF_CLASS_MATMUL ? kf_prompt_product_flops (spec, mnk) : 0;
    int per = c == KF_CLASS_ELEMENTWISE ? fm.calls : flops > 0 ? fm.after_product : 0;
    double outputs = kf_prompt_output_elements (spec);
    if (per <= 0 || !(outputs > 0))
        return;
    //  Round 46: tanh(x @ w / s).sum(dim=1) runs its tanh on every element
    //  of the product, 2.1 million, not on the 2048 outputs.
    kf_epilogue_t e;
    bool reduced = flops > 0 && kf_prompt_epilogue (spec, &e) && e.reduced;
    if (reduced)
        outputs = e.outputs;
    char b[48];
    //  Round 50: a * tanh(b), b one value a column, was said to make 16.8
    //  million tanh calls: a call of a broadcast input alone is made once
    //  a value, outside the loop over the output.
    int hoisted = c == KF_CLASS_ELEMENTWISE ? fm.hoist_calls : 0;
    if (hoisted > 0) {
        char v[48];
        fprintf (f, "  Calls of %s: %s broadcast across the output, %s values, so %s made "
                 "once a value, %s calls in all, before the loop over the output, not once per "
                 "output element", fm.hoist_names,
                 hoisted == 1 ? "its argument reads only an input"
                              : "their arguments read only inputs",
                 s_count (fm.hoist_values, v, sizeof v), hoisted == 1 ? "it can be" : "they can be",
                 s_count (fm.hoist_values * hoisted, b, sizeof b));
        per -= hoisted;
        if (per <= 0) {
            fputs ("; an output element then costs its arithmetic and its bytes alone.\n", f);
            return;
        }
        fputs (".\n", f);
    }
    double calls = per * outputs;
    fprintf (f, "  Calls of %s: the formula makes %d libm call%s per %s, so %s in "
             "each kernel call (%.0f %s). As scalar libm calls, at about %d cycles "
             "each (an assumption, not measured on this host: glibc's scalar tanhf, expf, erff "
             "and logf take some tens of cycles)", hoisted ? "the others" : fm.names, per,
             per == 1 ? "" : "s",
             reduced ? "element of the product" : "output element", s_count (calls, b, sizeof b),
             outputs, reduced ? "elements of the product, each row reduced to one output"
                              : "output elements", S_LIBM_CYCLES);
    double mhz = kf_jnum (d, "clock_mhz_measured", 0) > 0 ? kf_jnum (d, "clock_mhz_measured", 0)
                                                          : kf_jnum (d, "clock_mhz", 0);
    if (!(mhz > 0)) {
        fprintf (f, ", they take about %s cycles of one core.\n",
                 s_count (calls * S_LIBM_CYCLES, b, sizeof b));
        return;
    }
    double ms = calls * S_LIBM_CYCLES / (mhz * 1e3);
    fprintf (f, ", they take about %.3g ms of one core at %.0f MHz", ms, mhz);
    //  The bound they are set against: the product's operations at one
    //  core's FMA peak, or an elementwise task's traffic.
    double bound = 0, ordinary, stream;
    double peak = kf_jnum (d, "peak_gflops_one_core", 0);
    if (flops > 0 && peak > 0) {
        bound = flops / peak * 1e-6;
        //  Round 45: the triangle's count of x @ x.t() read as the whole
        //  product's beside kernels that compute every output.
        fprintf (f, ", against %.3g ms for the matrix product's %s operations%s at one core's "
                 "measured FMA peak (%.0f GFLOP/s)", bound, s_count (flops, b, sizeof b),
                 kf_prompt_product_self (spec) ? " (its diagonal and one triangle)" : "", peak);
    }
    //  Round 13: the timing's caches are cold, so the cold read rate
    //  where it was measured (the budget line's figure), else the warm
    //  copy rate.
    else if (c == KF_CLASS_ELEMENTWISE
             && (bound = kf_prompt_cold_ms (kf_prompt_side_bytes (spec, "inputs"),
                                            kf_prompt_side_bytes (spec, "outputs"), d, false))
                    > 0)
        fprintf (f, ", against %.3g ms for its memory traffic at one core's cold read rate %s",
                 bound, kf_prompt_write_gbs (d, false) > 0
                            ? "and streaming-store write rate"
                            : "(the writes at that rate too, an estimate)");
    else if (c == KF_CLASS_ELEMENTWISE && s_traffic_ms (spec, d, &ordinary, &stream)) {
        bound = stream > 0 && (!(ordinary > 0) || stream < ordinary) ? stream : ordinary;
        fprintf (f, ", against %.3g ms for its memory traffic at one core's copy rate", bound);
    }
    if (!(bound > 0)) {
        fputs (".\n", f);
        return;
    }
    double share = ms / bound;
    fprintf (f, ": %.0f%% of that bound.", 100 * share);
    if (share >= 0.2)
        fprintf (f, " Scalar calls would take a large share of the time: compute %s in SIMD "
                 "registers instead, by a polynomial or rational approximation within the "
                 "stated tolerance (What counts as correct), never a libm call per element%s.",
                 fm.names, c == KF_CLASS_MATMUL ? ", on each block of outputs while it is still "
                                                  "in registers (the product's epilogue)"
                                                : "");
    else
        fputs (" A small share: vectorising these calls gains less than the rest of the "
               "work.", f);
    //  Round 38: what the formula takes in SIMD registers, against the
    //  budget line below.
    char estimate[640];
    if (c == KF_CLASS_ELEMENTWISE && kf_prompt_formula_arith_words (spec, d, estimate,
                                                                     sizeof estimate))
        fprintf (f, " In SIMD registers the formula's arithmetic is estimated, not counted: %s; "
                 "set that against the arithmetic budget per vector below.", estimate);
    fputs ("\n", f);
}

//  The cache that keeps a working set between timed calls, from the
//  first device of HARDWARE: a GPU's L2 (CUDA), its largest cache (Level
//  Zero). The host's protocol flushes every cache before each call's data
//  is used, so there none does.
static void
s_kept_cache (json_t *hardware, kf_target_kind_t kind, kf_rates_t *r)
{
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    if (kind == KF_TARGET_HOST) {
        r->cold = true;
        return;
    }
    if (kf_jhas_num (d, "l2_bytes") && kf_jnum (d, "l2_bytes", 0) > 0) {
        r->cache_bytes = kf_jnum (d, "l2_bytes", 0);
        r->cache_name = "L2";
    }
    else if (kf_jhas_num (d, "cache_bytes") && kf_jnum (d, "cache_bytes", 0) > 0)
        r->cache_bytes = kf_jnum (d, "cache_bytes", 0);
}

long long
kf_prompt_dim (json_t *t, size_t i)
{
    json_t *d = json_array_get (json_object_get (t, "shape"), i);
    return json_is_integer (d) ? (long long) json_integer_value (d) : -1;
}

size_t
kf_prompt_rank (json_t *t)
{
    return json_array_size (json_object_get (t, "shape"));
}

void
kf_prompt_reference_rate_line (FILE *f, json_t *spec, json_t *d, double ref_ns)
{
    if (!(ref_ns > 0))
        return;
    double flops = kf_prompt_product_flops (spec, NULL);
    double peak = kf_jnum (d, "peak_gflops_one_core", 0);
    double bytes = kf_prompt_side_bytes (spec, "inputs") + kf_prompt_side_bytes (spec, "outputs");
    double copy = kf_jnum (d, "copy_one_core_gbs", 0);
    double rate, ceiling;
    const char *unit, *what;
    if (flops > 0 && peak > 0) {
        rate = flops / ref_ns;
        ceiling = peak;
        unit = "GFLOP/s";
        what = "one core's f32 FMA peak";
    }
    else if (bytes > 0 && copy > 0) {
        rate = bytes / ref_ns;
        ceiling = copy;
        unit = "GB/s";
        what = "one core's copy rate (bytes read plus written)";
    }
    else
        return;
    if (rate >= KF_PROMPT_SLOW_REFERENCE * ceiling)
        return;
    fprintf (f, "The reference is slow here: %.3g ms a call, %.3g %s, %.1f%% of %s (%.0f %s), so "
             "a kernel at a tenth of that rate is already %.0fx faster than it. "
             "Speedups against it run high; judge a kernel by its time and its share of the "
             "peaks, not by the size of its speedup.\n", ref_ns * 1e-6, rate, unit,
             100 * rate / ceiling, what, ceiling, unit, 0.1 * ceiling / rate);
}

//  Whether SPEC's work goes by its output like an elementwise task's: an
//  elementwise task, or a row reduction or scan whose outputs are as
//  many as its largest input's elements (softmax, a norm, a running sum).
static bool
s_memory_style (json_t *spec)
{
    kf_task_class_t c = kf_prompt_task_class (spec);
    if (c == KF_CLASS_ELEMENTWISE)
        return true;
    if (c != KF_CLASS_ROW_REDUCTION && c != KF_CLASS_SCAN)
        return false;
    double largest = 0;
    size_t i;
    json_t *t;
    json_array_foreach (json_object_get (spec, "inputs"), i, t)
        largest = fmax (largest, kf_prompt_tensor_elements (t));
    return largest > 0 && kf_prompt_output_elements (spec) >= largest;
}

bool
kf_prompt_per_vector (json_t *k, json_t *spec, json_t *hardware, int stores,
                      kf_per_vector_t *pv)
{
    memset (pv, 0, sizeof *pv);
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    pv->lanes = kf_prompt_vector_lanes (d, kf_jstr (hardware, "compile_isa"), &pv->unit);
    pv->ms = kf_jnum (k, "candidate_ns", 0) * 1e-6;
    pv->mhz = kf_prompt_host_mhz (d);
    pv->threads = kf_prompt_threads_in_use (kf_jstr (k, "source"), NULL, hardware, &pv->assumed);
    //  Round 22: "about 41 cycles of each core per vector ... each of its
    //  2 threads taking 1/2 of the vectors" of a kernel timed while other
    //  work took 1.3 of the 2 cores: its threads had the CPU time the
    //  load left, and its cycles are counted over that.
    pv->cpus = pv->threads;
    json_t *load = json_object_get (k, "host_load");
    double others = kf_prompt_load_others (load);
    double cores_all = kf_jnum (load, "cpus", 0) > 0 ? kf_jnum (load, "cpus", 0)
                                                    : kf_prompt_host_cores (d);
    if (pv->threads > 1 && others > 0 && kf_prompt_load_busy (load) && cores_all >= 1) {
        pv->others = others;
        pv->cpus = fmax (1, fmin (pv->threads, cores_all - others));
    }
    //  Round 32: "each of its 2 threads taking 1/2 of the vectors" of a
    //  kernel whose process used 0.95 CPU-seconds a second of its calls
    //  in that timing, which the load figures alone had not shown: the
    //  CPU time it had is what it used.
    double used = kf_prompt_threads_side_by_side (k);
    if (pv->threads > 1 && used > 0 && used < pv->cpus) {
        pv->used = used;
        pv->cpus = fmax (1, used);
    }
    pv->cycles = kf_prompt_vector_cycles (spec, d, pv->lanes, pv->ms, pv->cpus);
    if (!s_memory_style (spec) || !(pv->cycles > 0))
        return false;
    //  The Target section's budget for as many cores (one, or all of them).
    double cores = kf_prompt_host_cores (d);
    double n = kf_prompt_side_bytes (spec, "inputs"), m = kf_prompt_side_bytes (spec, "outputs");
    double read = stores == 1 ? n + m : n;
    //  A threaded kernel left about one CPU by the load reads at one
    //  core's rate.
    if (pv->cpus < 1.5)
        pv->budget = kf_prompt_vector_cycles (spec, d, pv->lanes,
                                              kf_prompt_cold_ms (read, m, d, false), 1);
    else if (cores >= 1 && pv->cpus >= cores)
        pv->budget = kf_prompt_vector_cycles (spec, d, pv->lanes,
                                              kf_prompt_cold_ms (read, m, d, true), cores);
    pv->write_rate = kf_prompt_write_gbs (d, pv->cpus >= 1.5) > 0;
    return true;
}

//  Round 15: a kernel's time in cycles of each core per vector of
//  output on the threads it runs (candidate 2, 2.85 ms on one core, was
//  about 20 cycles a vector against a memory budget of 15, so bound by
//  its arithmetic; the model had to work that out), beside the budget
//  the Target section derives (kf_prompt_budget.c), one reckoning for
//  both (kf_prompt_per_vector). Round 21: the meta prompt's outcomes
//  have it too, from here.
bool
kf_prompt_per_vector_text (FILE *f, json_t *k, json_t *spec, json_t *hardware,
                           kf_stores_t stores, const char *lead)
{
    kf_per_vector_t pv;
    if (!kf_prompt_per_vector (k, spec, hardware, (int) stores, &pv))
        return false;
    char t[32];
    fprintf (f, "%s%s a call is about ", lead, kf_prompt_time_text (pv.ms * 1e6, t, sizeof t));
    fprintf (f, pv.cycles >= 10 ? "%.0f" : "%.1f", pv.cycles);
    fprintf (f, " cycles of each core per vector of %d f32 lanes (%s) of output, ", pv.lanes,
             pv.unit);
    if (pv.threads == 1)
        fputs ("on its one thread", f);
    else if (pv.cpus < pv.threads) {
        fprintf (f, "over the about %.1f CPUs' time its %.0f threads had (%s; ", pv.cpus,
                 pv.threads, pv.assumed ? "one a core assumed, as its code fixes no count"
                                        : "the count its code defines");
        if (pv.used > 0)
            fprintf (f, "its process used %.2f CPU-seconds a second of its calls in that "
                     "timing)", pv.used);
        else
            fprintf (f, "other work took %.1f of a core while it was timed)", pv.others);
    }
    else
        fprintf (f, "each of its %.0f threads taking 1/%.0f of the vectors (%s)", pv.threads,
                 pv.threads, pv.assumed ? "assumed: one on each core of the host, as its code "
                                          "fixes no count"
                                        : "the count its code defines");
    fprintf (f, ", at %.0f MHz (time x clock x %s / %.0f vectors; derived)", pv.mhz,
             pv.cpus < pv.threads ? "CPUs" : "threads",
             ceil (kf_prompt_output_elements (spec) / pv.lanes));
    if (pv.budget > 0)
        fprintf (f, "; the arithmetic budget for %s, reckoned as in the Target section with "
                 "%s at the cold read rates%s, is about %.0f",
                 pv.cpus < 1.5 ? "one core" : "all cores",
                 stores == KF_STORES_ORDINARY ? "N + 2M" : "N + M",
                 pv.write_rate ? " (the writes at the streaming-store write rate)" : "",
                 pv.budget);
    //  No verdict: the budget counts the writes at the streaming-store
    //  rate, or the read rate where none was measured, an estimate; the
    //  two figures side by side are the evidence (the plan's own verdict,
    //  with a margin: kf_search_idea_arith_bound).
    return true;
}

//  A share as people read it: "67%", or "1.25 times" above the rate.
static void
s_share (FILE *f, const kf_share_t *s)
{
    if (s->share > 1)
        fprintf (f, "%.2f times the", s->share);
    else
        fprintf (f, "%.0f%% of the", 100 * s->share);
    fprintf (f, " %.1f GB/s of %s", s->rate, s->rate_name);
}

//  A host kernel's bytes as they cross the bus (N + 2M for ordinary
//  stores) against the cold read rates the timing meets.
//  ALL: the all-core share, which the caller has already.
//  THREADED: whether the kernel's code starts threads.
static void
s_cold_shares (FILE *f, json_t *bw, json_t *spec, json_t *dev, kf_stores_t stores,
               const kf_share_t *all_share, bool threaded)
{
    kf_share_t one = kf_prompt_memory_share (bw, spec, dev, stores, KF_SHARE_ONE_CORE);
    kf_share_t all = *all_share;
    char b[48];
    fprintf (f, " Counting %s = %s, as it crosses the memory bus (%s), it moves %.1f GB/s",
             one.traffic, kf_rates_bytes (one.bytes, b, sizeof b), one.why, one.gbs);
    if (one.share > 0) {
        fputs (": ", f);
        s_share (f, &one);
    }
    if (all.share > 0) {
        fputs (one.share > 0 ? " and " : ": ", f);
        s_share (f, &all);
    }
    fputs (".", f);
    //  Round 48: "1.25 times ... one core's" of a kernel on two threads,
    //  and "1.07 times" of one on a single thread, each read as a bound
    //  broken.
    if (one.share > 1 && threaded)
        fputs (" Past one core's rate, as its threads use more than one core.", f);
    else if (one.share > 1)
        fputs (" Past one core's rate on one thread: that rate was measured on one stream at a "
               "time, and a loop over several streams keeps more requests in flight, so it "
               "estimates what one core moves rather than bounding it.", f);
}

void
kf_prompt_position_line (FILE *f, json_t *k, json_t *spec, json_t *hardware,
                         kf_target_kind_t kind)
{
    json_t *bw = json_object_get (k, "bandwidth");
    json_t *cp = json_object_get (k, "compute");
    kf_rates_t r = { .held = -1 };
    r.bytes = kf_jnum (bw, "bytes", 0);
    r.gbs = kf_jnum (bw, "candidate_gbs", 0);
    r.copy_gbs = kf_jnum (bw, "copy_gbs", 0);
    r.ref_gbs = kf_jnum (bw, "reference_gbs", 0);
    r.gflops = kf_jnum (cp, "candidate_gflops", 0);
    r.peak_gflops = kf_jnum (cp, "peak_gflops", 0);
    r.ref_gflops = kf_jnum (cp, "reference_gflops", 0);
    //  The worker's own judgement (roofline_applies: the data is larger
    //  than the cache) where no size is known here.
    if (json_is_boolean (json_object_get (bw, "roofline_applies")))
        r.held = json_is_true (json_object_get (bw, "roofline_applies")) ? 0 : 1;
    s_kept_cache (hardware, kind, &r);
    //  Round 15: a kernel of ordinary stores moves N + 2M, each store
    //  reading its line first. Round 17: that N + 2M was set against the
    //  copy figure, which counts N + M (90% where like for like said
    //  68%): against the copy the kernel counts N + M, and its N + 2M is
    //  set against the cold read rates below (kf_prompt_memory_share).
    json_t *dev = json_array_get (json_object_get (hardware, "devices"), 0);
    kf_stores_t stores = r.bytes > 0 && r.gbs > 0 ? kf_prompt_stores (k, spec, NULL, kind)
                                                  : KF_STORES_UNKNOWN;
    kf_share_t copy = kf_prompt_memory_share (bw, spec, dev, stores, KF_SHARE_COPY);
    if (r.bytes > 0 && kind == KF_TARGET_HOST) {
        r.copy_gbs = copy.rate;
        r.copy_name = copy.rate_name;
        r.gbs = copy.gbs;
        r.bytes = copy.bytes;
        r.traffic = copy.traffic;
    }
    //  No count from the task: a plain matrix product's 2*M*N*K follows
    //  from its shapes (round 3: "compute: not known" for a GEMM), an
    //  elementwise formula's operations from its code (round 11: "not
    //  known" beside "x / (1 + |x|)").
    //  A scan's too: its running sum is one addition an element (round
    //  27: "not known" for cumsum(x * sigmoid(g))).
    long long mnk[3] = { 0, 0, 0 }, batch = 1, heads = 0, chain[4];
    kf_formula_t fm = { .counted = false };
    kf_task_class_t cls = kf_prompt_task_class (spec);
    bool formula = (cls == KF_CLASS_ELEMENTWISE || cls == KF_CLASS_SCAN)
                   && kf_prompt_formula (spec, &fm);
    double derived = 0, ew = 0;
    bool half = false, whole = false, walks = false;
    if (!(r.gflops > 0) && kf_jhas_num (k, "candidate_ns") && kf_jnum (k, "candidate_ns", 0) > 0) {
        derived = kf_prompt_conv_flops (spec, mnk, &batch);
        if (!(derived > 0)) {
            double full = kf_prompt_matmul_count (spec, &batch, mnk);
            derived = kf_prompt_matmul_needed (spec, full, mnk);
            half = derived < full;
            //  Round 43: a kernel computing every output does the full
            //  product's work; its figures count that, unless they would
            //  pass every core's measured peak (a triangle the code's
            //  reading missed).
            //  Round 45: against the peak of the CPUs its calls used.
            json_t *d0 = json_array_get (json_object_get (hardware, "devices"), 0);
            double peak = kf_prompt_compute_ceiling (k, d0);
            if (!(peak > 0))
                peak = r.peak_gflops;
            //  The features the kernel's row keeps where it has them (a
            //  history row), else its source read again.
            json_t *kept = json_object_get (k, "features");
            bool every = half
                         && kf_prompt_product_every_output (
                             spec, json_is_integer (kept) ? NULL : kf_jstr (k, "source"),
                             json_is_integer (kept) ? (unsigned) json_integer_value (kept)
                                                    : ~0u);
            if (every && !(peak > 0 && full / kf_jnum (k, "candidate_ns", 0) > peak)) {
                derived = full;
                half = false;
                whole = true;
            }
            walks = half && !every && *kf_jstr (k, "source");
        }
        if (!(derived > 0))
            derived = kf_prompt_attention_flops (spec, &heads, NULL);
        if (!(derived > 0) && formula && fm.counted && fm.calls == 0 && fm.ops > 0)
            ew = fm.ops * kf_prompt_output_elements (spec);
    }
    double count = derived > 0 ? derived : ew;
    //  Round 18: "the task gives no operation count" for atan2 * sqrt(...),
    //  where the count stops at a libm call whose cost is the kernel's.
    //  Round 38: and the helper counted atan's and exp's instructions
    //  itself on every prompt; an estimate (kf_prompt_arith.h) says
    //  what the formula's arithmetic takes a vector.
    char uncounted[1200], estimate[840];
    if (!(count > 0) && formula && fm.calls > 0) {
        //  Round 45: the estimate in full, about 700 characters, stood in
        //  the Target section and again in each kernel's line: here it is
        //  named by its figure.
        kf_arith_t a;
        bool est = kind == KF_TARGET_HOST && kf_prompt_formula_arith (spec, dev, &a)
                   && a.cycles > 0;
        if (est)
            snprintf (estimate, sizeof estimate, "the Target section estimates them at about "
                      "%.0f cycles of one core a vector of outputs (an upper figure)", a.cycles);
        //  Round 40: the estimate stood above a kernel's whole time (25
        //  cycles against 19) with no word that the kernel beats it.
        kf_per_vector_t pv;
        size_t used = est ? strlen (estimate) : 0;
        if (est
            && kf_prompt_per_vector (k, spec, hardware, (int) kf_prompt_stores (k, spec, NULL,
                                                                                kind), &pv)
            && pv.cycles > 0 && pv.cycles < KF_PROMPT_ARITH_FILLS * a.cycles)
            snprintf (estimate + used, sizeof estimate - used, "; this kernel takes about %.0f "
                      "cycles of each core a vector in all, under the estimate: its math is "
                      "cheaper than the estimate assumes, and its own time says what it costs",
                      pv.cycles);
        snprintf (uncounted, sizeof uncounted, "the formula calls %s, whose operations depend "
                  "on how the kernel computes %s%s%s: set its cycles per vector against the "
                  "Target section's arithmetic budget", fm.names, fm.calls == 1 ? "it" : "them",
                  est ? "; " : "", est ? estimate : "");
        r.uncounted = uncounted;
        r.estimated = est;
    }
    if (count > 0) {
        r.gflops = count / kf_jnum (k, "candidate_ns", 0);
        if (kf_jhas_num (k, "reference_ns") && kf_jnum (k, "reference_ns", 0) > 0)
            r.ref_gflops = count / kf_jnum (k, "reference_ns", 0);
        json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
        if (!(r.peak_gflops > 0) && kf_jhas_num (d, "peak_gflops"))
            r.peak_gflops = kf_jnum (d, "peak_gflops", 0);
    }
    if (!(r.gbs > 0) && !(r.gflops > 0))
        return;
    //  Round 5: a kernel above the measured peak shows the peak is a
    //  lower bound; the share is taken of what the kernel reached.
    double measured_peak = 0;
    if (r.peak_gflops > 0 && r.gflops > r.peak_gflops) {
        measured_peak = r.peak_gflops;
        r.peak_gflops = r.gflops;
    }
    fputs ("Position against the peaks:", f);
    kf_share_t all = { .share = 0 };
    if (stores != KF_STORES_UNKNOWN)
        all = kf_prompt_memory_share (bw, spec, dev, stores, KF_SHARE_ALL_CORES);
    r.mix_after = all.mix;
    kf_rates_write (f, &r);
    char b[48], kinds[128], times[32] = "";
    if (stores != KF_STORES_UNKNOWN)
        s_cold_shares (f, bw, spec, dev, stores, &all,
                       kf_prompt_source_does (kf_jstr (k, "source"), "c", KF_IDEA_THREADS));
    if (measured_peak > 0)
        fprintf (f, " The measured peak (%.1f GFLOP/s, taken at the worker's start beside the "
                 "host's other work) is a lower bound: this kernel reached %.1f GFLOP/s, so "
                 "the peak is at least that, and the share above is of %.1f.", measured_peak,
                 r.gflops, r.gflops);
    //  Round 7: a one-thread kernel read "28% of the measured peak"
    //  against every core summed, when 56% of its one core was the room
    //  it had left; both shares are stated.
    double one_core = kind == KF_TARGET_HOST ? kf_jnum (dev, "peak_gflops_one_core", 0) : 0;
    if (one_core > 0 && r.gflops > 0 && r.peak_gflops > one_core * 1.05)
        fprintf (f, " The peak above is every core's summed; against one core's peak (%.1f "
                 "GFLOP/s) this kernel is at %.0f%%, the share that applies if it runs on "
                 "one thread.", one_core, 100 * r.gflops / one_core);
    if (kind == KF_TARGET_HOST && kf_prompt_per_vector_text (f, k, spec, hardware, stores,
                                                        " Per vector: "))
        fputs (".", f);
    //  Round 16: the epilogue's work, where read, counted and estimated
    //  (the same reckoning as the Target section's and the meta round's).
    kf_epilogue_t ep;
    double pms, ems;
    bool epilogue = derived > 0 && kf_prompt_epilogue_ms (spec, dev, &ep, &pms, &ems);
    const char *rest = epilogue ? ")." : "; the other work is not counted).";
    if (batch > 1)
        snprintf (times, sizeof times, "%lld*", batch);
    if (heads > 0)
        fprintf (f, " The compute figures count attention's two products, 2 x %s x "
                 "(q's and v's features) for each of the %lld (batch, head) pairs = %s "
                 "operations, derived from the shapes (the task states no count; the "
                 "softmax's exponentials are not counted).",
                 kf_prompt_attention_causal (spec)
                     ? "the (query, key) pairs the causal mask leaves (about half of queries x "
                       "keys)"
                     : "queries x keys",
                 heads, s_count (derived, b, sizeof b));
    else if (whole)
        fprintf (f, " The compute figures count the full product's %s2*M*N*K = %s2*%lld*%lld*%lld "
                 "= %s operations, derived from the shapes: the product is symmetric, but this "
                 "kernel's loops walk no triangle as its code reads, so it computes every "
                 "output (were it to compute one triangle after all, its own rate and shares "
                 "of the peaks would be half those above; the task states no count%s",
                 batch > 1 ? "B*" : "", times, mnk[0], mnk[1], mnk[2],
                 s_count (derived, b, sizeof b), rest);
    else if (half)
        fprintf (f, " The compute figures count the symmetric product's diagonal and one "
                 "triangle, %s2*K*M*(M+1)/2 = %s2*%lld*%lld*%lld/2 = %s operations, derived from "
                 "the shapes: half the full product's 2*M*N*K; %s (the task states no count%s",
                 batch > 1 ? "B*" : "", times, mnk[2], mnk[0], mnk[0] + 1,
                 s_count (derived, b, sizeof b),
                 walks ? "this kernel's loops walk one triangle, as its code reads"
                       : "a kernel that computes every output does all of those, so its own "
                         "rate and shares of the peaks are twice those above",
                 rest);
    else if (derived > 0 && batch > 1)
        fprintf (f, " The compute figures count the %lld matrix products' B*2*M*N*K = "
                 "%lld*2*%lld*%lld*%lld = %s operations, derived from the shapes (the task "
                 "states no count%s", batch, batch, mnk[0], mnk[1], mnk[2],
                 s_count (derived, b, sizeof b), rest);
    //  Round 52: the chain's count under one product's formula.
    else if (derived > 0 && kf_prompt_chain_flops (spec, chain) > 0)
        fprintf (f, " The compute figures count the chain's two products, 2*M*R*(K + N) = "
                 "2*%lld*%lld*(%lld + %lld) = %s operations, derived from the shapes (the task "
                 "states no count%s", chain[0], chain[2], chain[1], chain[3],
                 s_count (derived, b, sizeof b), rest);
    else if (derived > 0)
        fprintf (f, " The compute figures count the matrix product's 2*M*N*K = 2*%lld*%lld*%lld "
                 "= %s operations, derived from the shapes (the task states no count%s",
                 mnk[0], mnk[1], mnk[2], s_count (derived, b, sizeof b), rest);
    if (epilogue)
        kf_prompt_epilogue_position (f, spec, dev);
    if (ew > 0)
        fprintf (f, " The compute figures count the formula's %d operation%s an element (%s, "
                 "as its code reads) over %.0f output elements = %s operations, derived from "
                 "the reference (the task states no count; a division or square root counts "
                 "as one though it costs several products).", fm.ops, fm.ops == 1 ? "" : "s",
                 kf_prompt_formula_kinds (fm.kinds, kinds, sizeof kinds),
                 kf_prompt_output_elements (spec), s_count (ew, b, sizeof b));
    fputs ("\n", f);
}

