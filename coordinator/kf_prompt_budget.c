/*  kf_prompt_budget.c - the host's read rates, and what a task's bytes
 *  cost at the cold ones (kf_prompt_budget.h).
 *
 *  Every figure is the exec worker's (kf_host_measure.c) or follows from
 *  its figures and the task's shapes by one division, and the text says
 *  which: the model is to set a formula against them, so a derived
 *  figure read as a measured one would mislead it twice.
 */
#include "kf_prompt_budget.h"
#include "kf_prompt_class.h"
#include "kf_prompt_epilogue.h"
#include "kf_prompt_layout.h"
#include "kf_prompt_target.h"
#include "kf_json.h"
#include "kf_rates.h"
#include <math.h>
#include <string.h>

double
kf_prompt_host_mhz (json_t *d)
{
    double measured = kf_jnum (d, "clock_mhz_measured", 0);
    return measured > 0 ? measured : fmax (kf_jnum (d, "clock_mhz", 0), 0);
}

double
kf_prompt_host_cores (json_t *d)
{
    double physical = kf_jnum (d, "physical_cores", 0);
    return physical >= 1 ? physical : fmax (kf_jnum (d, "cores", 0), 0);
}

//  BYTES to one decimal of KiB, or whole bytes below one KiB.
static void
s_small_bytes (FILE *f, double bytes)
{
    if (bytes >= 1024)
        fprintf (f, "%.1f KiB", bytes / 1024);
    else
        fprintf (f, "%.0f bytes", bytes);
}

//  " (N cycles)" where D has KEY.
static void
s_cycles (FILE *f, json_t *d, const char *key)
{
    if (kf_jnum (d, key, 0) > 0)
        fprintf (f, " (%.0f cycles)", kf_jnum (d, key, 0));
}

//  A model in the loop (host target, AVX2 2-CPU VM) could not size a
//  software prefetch distance: no latency was given. What is in flight
//  to keep a read rate going is the latency times the rate (Little's
//  law), in bytes and 64-byte lines; derived, and said to be.
static void
s_latency (FILE *f, json_t *d)
{
    double mem = kf_jnum (d, "mem_latency_ns", 0), one = kf_jnum (d, "read_cold_one_core_gbs", 0);
    if (!(mem > 0) || !(one > 0))
        return;
    double l2 = kf_jnum (d, "l2_latency_ns", 0), l2_gbs = kf_jnum (d, "read_l2_one_core_gbs", 0);
    fprintf (f, "  Load latency of one core (a chain of dependent loads of random lines, the "
             "best run): %.0f ns from memory", mem);
    s_cycles (f, d, "mem_latency_cycles");
    if (l2 > 0) {
        fprintf (f, ", %.1f ns from L2", l2);
        s_cycles (f, d, "l2_latency_cycles");
    }
    //  ns x GB/s is bytes.
    fprintf (f, ". At %.0f ns and one core's cold read rate of %.1f GB/s a core needs about ",
             mem, one);
    s_small_bytes (f, mem * one);
    fprintf (f, ", %.0f cache lines, in flight (latency x rate, derived): prefetch that far "
             "ahead of use", fmax (1, round (mem * one / 64)));
    if (l2 > 0 && l2_gbs > 0) {
        fprintf (f, "; from L2 (%.1f ns at %.0f GB/s) about ", l2, l2_gbs);
        s_small_bytes (f, l2 * l2_gbs);
        fprintf (f, ", %.0f lines", fmax (1, round (l2 * l2_gbs / 64)));
    }
    fputs (".\n", f);
}

//  Round 23's best product kernel came from a k block of 64 rows 2 KiB
//  apart, and no prompt said how many pages a first-level data TLB
//  covers: the exec worker measures it (kf_host_tlb.c), the second
//  level's too where its step showed.
static void
s_tlb (FILE *f, json_t *d)
{
    double l1 = kf_jnum (d, "dtlb_l1_pages", 0), l2 = kf_jnum (d, "dtlb_l2_pages", 0);
    if (!(l1 >= 1))
        return;
    char b[32];
    fprintf (f, "  Data TLB of one core (measured: one line on each of N 4 KiB pages, the step "
             "in a dependent load's time): the first level covers %.0f pages (%s)", l1,
             kf_rates_bytes (l1 * 4096, b, sizeof b));
    if (l2 > l1)
        fprintf (f, ", the second %.0f (%s)", l2, kf_rates_bytes (l2 * 4096, b, sizeof b));
    fputs (". A loop that walks more pages at once than the first level covers (rows of a "
           "block 4 KiB or more apart each take a page) pays a second-level lookup, several "
           "cycles, on its loads to pages the first level no longer holds.\n", f);
}

void
kf_prompt_host_reads (FILE *f, json_t *d)
{
    char b[32];
    double one = kf_jnum (d, "read_cold_one_core_gbs", 0);
    double all = kf_jnum (d, "read_cold_all_cores_gbs", 0);
    double cpus = kf_jnum (d, "cores", 0);
    //  Round 5: a cold-cache one-core rate was guessed; stated beside
    //  the all-core copy.
    if (one > 0) {
        fprintf (f, "  Memory read by one core with cold caches: %.1f GB/s (one thread reading "
                 "%s flushed from every cache level first, the best of three; bytes read)", one,
                 kf_rates_bytes (kf_jnum (d, "read_cold_one_core_bytes", 0), b, sizeof b));
        if (kf_jnum (d, "copy_bandwidth_gbs", 0) > 0)
            fprintf (f, ", against %.0f GB/s for the copy on every core at once above",
                     kf_jnum (d, "copy_bandwidth_gbs", 0));
        fputs (": the rate a one-thread kernel's inputs arrive at in the timing.\n", f);
    }
    //  Round 13: a threaded kernel's inputs arrive at the rate all cores
    //  draw together, which the copy above (warm, memcpy's own stores)
    //  does not give.
    if (all > 0) {
        fprintf (f, "  Memory read by all cores at once with cold caches: %.1f GB/s in all (one "
                 "thread on each", all);
        if (cpus >= 1)
            fprintf (f, " of the %.0f logical CPUs", cpus);
        else
            fputs (" logical CPU", f);
        fprintf (f, " reading its share of %s flushed first, let go together and timed from the "
                 "first start to the last finish, the best of three; bytes read)",
                 kf_rates_bytes (kf_jnum (d, "read_cold_all_cores_bytes", 0), b, sizeof b));
        if (one > 0)
            fprintf (f, ", %.1fx one core's", all / one);
        fputs (": the rate a threaded kernel's inputs arrive at in the timing", f);
        if (one > 0 && cpus > 1 && all < 1.2 * one)
            fputs ("; near one core's, so by this figure more threads speed the arithmetic, "
                   "not the reads", f);
        fputs (".\n", f);
    }
    //  Round 20: no rate at which a kernel's outputs leave, with
    //  streaming stores, was given.
    double w1 = kf_prompt_write_gbs (d, false), wa = kf_prompt_write_gbs (d, true);
    if (w1 > 0 || wa > 0) {
        fputs ("  Memory written with streaming (non-temporal) stores alone, nothing read, "
               "into lines no cache holds:", f);
        if (w1 > 0)
            fprintf (f, " %.1f GB/s by one core (one thread writing %s, flushed from the caches "
                     "first, the best of three)", w1,
                     kf_rates_bytes (kf_jnum (d, "write_stream_one_core_bytes", 0), b, sizeof b));
        if (w1 > 0 && wa > 0)
            fputs (",", f);
        if (wa > 0)
            fprintf (f, " %.1f GB/s by all cores at once (each thread writing its share of %s, "
                     "let go together, as the read above)", wa,
                     kf_rates_bytes (kf_jnum (d, "write_stream_all_cores_bytes", 0), b, sizeof b));
        fputs ("; bytes written: the rate a kernel's outputs leave at with streaming stores.\n",
               f);
    }
    //  Round 13: a matrix product's author asked for the L2's rate to size
    //  cache blocks by.
    double l2 = kf_jnum (d, "read_l2_one_core_gbs", 0), mhz = kf_prompt_host_mhz (d);
    if (l2 > 0) {
        fputs ("  One core reading from its L2: ", f);
        if (kf_jnum (d, "read_l2_one_core_bytes", 0) > 0)
            fprintf (f, "%s (half the L2) read again and again, warm, ",
                     kf_rates_bytes (kf_jnum (d, "read_l2_one_core_bytes", 0), b, sizeof b));
        fprintf (f, "%.0f GB/s", l2);
        if (mhz > 0)
            fprintf (f, ", %.0f bytes a cycle at %.0f MHz", l2 * 1e3 / mhz, mhz);
        if (one > 0)
            fprintf (f, ", %.1fx its cold read from memory", l2 / one);
        fputs (" (the best of twenty runs; bytes read): the rate a block kept in L2 feeds one "
               "core's arithmetic.\n", f);
        //  Round 17: two threads of a tile kernel fed from L2 scaled
        //  poorly, and only one core's L2 read was measured.
        double l2_all = kf_jnum (d, "read_l2_all_cores_gbs", 0);
        if (l2_all > 0) {
            fprintf (f, "  Every logical CPU reading from L2 at once (%s in all, a quarter of an "
                     "L2 each, let go together): %.0f GB/s, %.2fx one core's", kf_rates_bytes (
                     kf_jnum (d, "read_l2_all_cores_bytes", 0), b, sizeof b), l2_all, l2_all / l2);
            //  Round 35: "(the logical CPUs may share a core and its L2)"
            //  beside the topology line's "no SMT siblings".
            bool own = kf_jnum (d, "physical_cores", 0) > 0
                       && kf_jnum (d, "physical_cores", 0) >= kf_jnum (d, "cores", 0);
            if (l2_all < 1.3 * l2)
                fprintf (f, "; near one core's, so threads whose blocks stay in L2 gain little "
                         "in their reads (%s)", own ? "this host reports no SMT siblings, but "
                         "a virtual machine's CPUs may still share a physical core and its L2 "
                         "beneath it" : "the logical CPUs may share a core and its L2");
            else
                fprintf (f, "; threads whose blocks stay in L2 can draw about %.1fx one core's "
                         "reads", l2_all / l2);
            fputs (".\n", f);
        }
    }
    s_latency (f, d);
    s_tlb (f, d);
}

double
kf_prompt_write_gbs (json_t *d, bool all)
{
    return kf_jnum (d, all ? "write_stream_all_cores_gbs" : "write_stream_one_core_gbs", 0);
}

//  Round 20: the writes at the streaming-store write rate where it was
//  measured; where it is not, at the read rate (an estimate the texts
//  say is one). On one core the two times are added: its reads and its
//  writes share its line buffers. Round 50: on all cores, where both
//  rates were measured, they overlap, each stream at its own rate, and
//  the longer time is the floor, as the position line's share and the
//  audit's ceiling take it (kf_plausible_mix): round 46's kernels moved
//  50-51 GB/s on all cores where the added times allowed 33, and one
//  prompt gave both figures.
double
kf_prompt_cold_ms (double n, double m, json_t *d, bool all)
{
    double read = kf_jnum (d, all ? "read_cold_all_cores_gbs" : "read_cold_one_core_gbs", 0);
    double write = kf_prompt_write_gbs (d, all);
    if (!(read > 0) || !(n + m > 0))
        return 0;
    if (all && write > 0 && m > 0 && n > 0)
        return fmax (n / read, m / write) * 1e-6;
    return (n / read + m / (write > 0 ? write : read)) * 1e-6;
}

void
kf_prompt_task_cold_text (FILE *f, double n, double m, json_t *d)
{
    double r1 = kf_prompt_cold_ms (n, 0, d, false), ra = kf_prompt_cold_ms (n, 0, d, true);
    if (!(r1 > 0) && !(ra > 0))
        return;
    fputs (". With the timing's cold caches, reading N takes about", f);
    if (r1 > 0)
        fprintf (f, " %.3g ms at one core's cold read rate (%.1f GB/s)", r1,
                 kf_jnum (d, "read_cold_one_core_gbs", 0));
    if (r1 > 0 && ra > 0)
        fputs (" and", f);
    if (ra > 0)
        fprintf (f, " %.3g ms at all cores' (%.1f GB/s)", ra,
                 kf_jnum (d, "read_cold_all_cores_gbs", 0));
    if (!(m > 0))
        return;
    //  Without a write rate the writes at the read rate are a guess, and
    //  said to be.
    double w1 = kf_prompt_write_gbs (d, false), wa = kf_prompt_write_gbs (d, true);
    if ((w1 > 0 || !(r1 > 0)) && (wa > 0 || !(ra > 0))) {
        fputs ("; with the writes at the streaming-store write rate (", f);
        if (r1 > 0)
            fprintf (f, "%.1f GB/s on one core", w1);
        if (r1 > 0 && ra > 0)
            fputs (", ", f);
        if (ra > 0)
            fprintf (f, "%.1f GB/s on all cores", wa);
        fputs (") and the reads' and the writes' times added on one core (its line buffers "
               "carry both) but overlapping on all cores (the longer of the two), N + M, the "
               "cold estimate with streaming stores, takes about", f);
    }
    else
        fputs ("; with the writes at that rate too (an estimate: no write rate was measured "
               "cold), N + M, the cold estimate with streaming stores, takes about", f);
    if (r1 > 0)
        fprintf (f, " %.3g ms on one core", kf_prompt_cold_ms (n, m, d, false));
    if (r1 > 0 && ra > 0)
        fputs (" and", f);
    if (ra > 0)
        fprintf (f, " %.3g ms on all cores", kf_prompt_cold_ms (n, m, d, true));
    //  Round 17: the floor a kernel of ordinary stores meets was not
    //  said (128 MiB at one core's 46.4 GB/s, about 2.9 ms, where N + M
    //  gave 2.17 ms): cheaper math on one thread could gain 12% at most.
    //  The line reads are reads: N + M read, M written.
    char b[32];
    fprintf (f, ", and N + 2M = %s, the cold estimate with ordinary stores (each reads its "
             "line first), about", kf_rates_bytes (n + 2 * m, b, sizeof b));
    if (r1 > 0)
        fprintf (f, " %.3g ms on one core", kf_prompt_cold_ms (n + m, m, d, false));
    if (r1 > 0 && ra > 0)
        fputs (" and", f);
    if (ra > 0)
        fprintf (f, " %.3g ms on all cores", kf_prompt_cold_ms (n + m, m, d, true));
}

//  Whether the space-separated LIST holds WORD.
static bool
s_has_word (const char *list, const char *word)
{
    size_t n = strlen (word);
    for (const char *p = list; (p = strstr (p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return true;
    return false;
}

int
kf_prompt_vector_lanes (json_t *d, const char *isa, const char **name)
{
    if (!isa || !*isa)
        isa = kf_jstr (d, "isa");
    static const struct { const char *word, *name; int lanes; } units[] = {
        { "avx512f", "AVX-512", 16 }, { "avx2", "AVX2", 8 }, { "sse4.2", "SSE", 4 },
        { "neon", "NEON", 4 },
    };
    for (size_t i = 0; isa && i < sizeof units / sizeof units[0]; i++)
        if (s_has_word (isa, units[i].word)) {
            *name = units[i].name;
            return units[i].lanes;
        }
    return 0;
}

double
kf_prompt_vector_cycles (json_t *spec, json_t *d, int lanes, double ms, double threads)
{
    double outputs = kf_prompt_output_elements (spec), mhz = kf_prompt_host_mhz (d);
    if (lanes <= 0 || !(outputs > 0) || !(mhz > 0) || !(ms > 0) || !(threads >= 1))
        return 0;
    return ms * 1e3 * mhz * threads / ceil (outputs / lanes);
}

double
kf_prompt_vector_fmas (json_t *d, int lanes)
{
    double peak = kf_jnum (d, "peak_gflops_one_core", 0), mhz = kf_prompt_host_mhz (d);
    return peak > 0 && mhz > 0 && lanes > 0 ? peak * 1e3 / (2.0 * lanes * mhz) : 0;
}

//  A count of cycles or instructions: whole above 10, one decimal below.
static void
s_amount (FILE *f, double v)
{
    fprintf (f, v >= 10 ? "%.0f" : "%.1f", v);
}

//  "ONE UNIT on one core and ALL on all cores", either alone where the
//  other is not known (0); UNIT after the first figure only.
static void
s_fmas (FILE *f, double one, double all, const char *unit)
{
    if (one > 0) {
        s_amount (f, one);
        fprintf (f, "%s on one core", unit);
    }
    if (one > 0 && all > 0)
        fputs (" and ", f);
    if (all > 0) {
        s_amount (f, all);
        fprintf (f, "%s on all cores", one > 0 ? "" : unit);
    }
}

void
kf_prompt_task_budget_line (FILE *f, json_t *spec, json_t *d, const char *isa)
{
    if (kf_prompt_task_class (spec) != KF_CLASS_ELEMENTWISE)
        return;
    const char *unit = NULL;
    int lanes = kf_prompt_vector_lanes (d, isa, &unit);
    double n = kf_prompt_side_bytes (spec, "inputs"), m = kf_prompt_side_bytes (spec, "outputs");
    double outputs = kf_prompt_output_elements (spec), mhz = kf_prompt_host_mhz (d);
    //  SMT siblings share one core's units: the instructions a vector may
    //  take are a physical core's.
    double cores = kf_prompt_host_cores (d);
    double one_ms = kf_prompt_cold_ms (n, m, d, false);
    double all_ms = cores >= 1 ? kf_prompt_cold_ms (n, m, d, true) : 0;
    if (lanes == 0 || !(outputs > 0) || !(m > 0) || !(mhz > 0) || !(one_ms > 0 || all_ms > 0))
        return;
    double vectors = ceil (outputs / lanes);
    double one = kf_prompt_vector_cycles (spec, d, lanes, one_ms, 1);
    double all = kf_prompt_vector_cycles (spec, d, lanes, all_ms, cores);
    char b[32];
    bool writes = kf_prompt_write_gbs (d, false) > 0 || kf_prompt_write_gbs (d, true) > 0;
    fprintf (f, "  Arithmetic budget per vector of %d f32 lanes (%s), %.0f vectors of outputs: "
             "the task's N + M = %s, its bytes with streaming stores, at the cold read rates "
             "above (the writes at the %s rate) take about", lanes, unit, vectors, kf_rates_bytes (n + m, b, sizeof b),
             writes ? "streaming-store write" : "read");
    if (one > 0) {
        fprintf (f, " %.3g ms on one core, ", one_ms);
        s_amount (f, one);
        fprintf (f, " cycles per vector at %.0f MHz", mhz);
    }
    if (one > 0 && all > 0)
        fputs (", and", f);
    if (all > 0) {
        fprintf (f, " %.3g ms on all %.0f cores, ", all_ms, cores);
        s_amount (f, all);
        fprintf (f, " cycles per vector on each core (each with 1/%.0f of the vectors)", cores);
    }
    //  Round 13: cycles alone do not say how long a polynomial may be;
    //  the FMAs a cycle do, from the peak measured with the same loop
    //  as the ceiling.
    double peak = kf_jnum (d, "peak_gflops_one_core", 0);
    double fmas = kf_prompt_vector_fmas (d, lanes);
    if (fmas > 0) {
        fprintf (f, ". One core's measured FMA peak, %.0f GFLOP/s, is %.1f vector FMAs a cycle "
                 "at that clock (peak / (2 flops x %d lanes x clock)), so the budget is about ",
                 peak, fmas, lanes);
        s_fmas (f, one * fmas, all * fmas, " vector FMAs per vector");
        fputs (" (or as many other vector instructions of like throughput)", f);
        //  Round 20: the budget was the streaming stores' (N + M) for
        //  every attempt, also those whose stores read the output first.
        double one2 = kf_prompt_vector_cycles (spec, d, lanes,
                                               kf_prompt_cold_ms (n + m, m, d, false), 1);
        double all2 = cores >= 1 ? kf_prompt_vector_cycles (
                                       spec, d, lanes, kf_prompt_cold_ms (n + m, m, d, true),
                                       cores)
                                 : 0;
        //  Round 22: the position line's "budget ... is about 20" (N +
        //  2M, in cycles) beside this line's 15 cycles (N + M) read as two
        //  budgets of one kernel: each is in cycles, with its stores.
        if (one2 > 0 || all2 > 0) {
            fprintf (f, ". With ordinary stores, which read each output line before writing "
                     "it (N + 2M = %s), the budget is about ",
                     kf_rates_bytes (n + 2 * m, b, sizeof b));
            if (one2 > 0) {
                s_amount (f, one2);
                fputs (" cycles per vector on one core", f);
            }
            if (one2 > 0 && all2 > 0)
                fputs (" and ", f);
            if (all2 > 0) {
                s_amount (f, all2);
                fputs (" on each of all cores", f);
            }
            fputs (", that is ", f);
            s_fmas (f, one2 * fmas, all2 * fmas, " vector FMAs");
            fputs (": a kernel's position line sets its cycles against the budget of the stores "
                   "its code uses", f);
        }
    }
    fprintf (f, ". Derived, not measured: the task's bytes over the measured cold %s rates "
             "give the time memory needs, times the clock the cycles, shared over the vectors; "
             "a formula taking more per vector than this is bound by its arithmetic, not by "
             "memory.\n", writes ? "read and write" : "read");
}

void
kf_prompt_task_product_line (FILE *f, json_t *spec, json_t *d)
{
    long long mnk[3] = { 0, 0, 0 };
    double flops = kf_prompt_product_flops (spec, mnk);
    double one = kf_jnum (d, "peak_gflops_one_core", 0), all = kf_jnum (d, "peak_gflops", 0);
    if (!(flops > 0) || !(one > 0))
        return;
    if (kf_prompt_attention_flops (spec, NULL, NULL) > 0) {
        kf_prompt_attention_line (f, spec, d);
        return;
    }
    long long groups = 0;
    if (kf_prompt_conv_flops (spec, NULL, &groups) > 0)
        fprintf (f, "  Compute floor: the convolution is a matrix product in disguise (each "
                 "output element a dot product over input channels and kernel taps): M = %lld "
                 "output channels%s, N = %lld (batch x output positions), K = %lld (input "
                 "channels x kernel taps), 2 x M x N x K%s = %.4g million operations; they take "
                 "at least %.3g ms at one core's measured FMA peak", mnk[0],
                 groups > 1 ? " of a group" : "", mnk[1], mnk[2],
                 groups > 1 ? " x the groups" : "", flops * 1e-6, flops / one * 1e-6);
    else {
        //  Round 38: "the product's 2 x M x N x K = 805.3 million" of two
        //  products of 402.6 million each.
        long long batch = 1;
        double whole = kf_prompt_matmul_count (spec, &batch, NULL);
        //  Round 42: the Gram matrix's "2 x M x N x K = 537.4 million",
        //  the triangle's count under the full product's formula.
        long long c[4];
        if (kf_prompt_chain_flops (spec, c) > 0)
            fprintf (f, "  Compute floor: the chain's two products, 2 x M x K x R for the [M][R] "
                     "intermediate (M = %lld, K = %lld, R = %lld: %.4g million) and 2 x M x R x "
                     "N for the output (N = %lld: %.4g million), %.4g million operations in "
                     "all, take at least %.3g ms at one core's measured FMA peak", c[0], c[1],
                     c[2], 2e-6 * (double) c[0] * (double) c[1] * (double) c[2], c[3],
                     2e-6 * (double) c[0] * (double) c[2] * (double) c[3], flops * 1e-6,
                     flops / one * 1e-6);
        else if (whole > flops)
            fprintf (f, "  Compute floor: the symmetric product's diagonal and one triangle, "
                     "%s2 x K x M x (M + 1) / 2 = %.4g million operations (M = N = %lld, K = "
                     "%lld), half the full product's %.4g million, take at least %.3g ms at one "
                     "core's measured FMA peak (a kernel that computes every output does "
                     "twice the work: %.3g ms)", batch > 1 ? "B x " : "", flops * 1e-6, mnk[0],
                     mnk[2], whole * 1e-6, flops / one * 1e-6, whole / one * 1e-6);
        else if (batch > 1)
            fprintf (f, "  Compute floor: the %lld products' B x 2 x M x N x K = %.4g million "
                     "operations (B = %lld; M = %lld, N = %lld, K = %lld per product) take at "
                     "least %.3g ms at one core's measured FMA peak", batch, flops * 1e-6,
                     batch, mnk[0], mnk[1], mnk[2], flops / one * 1e-6);
        else
            fprintf (f, "  Compute floor: the product's 2 x M x N x K = %.4g million operations "
                     "(M = %lld, N = %lld, K = %lld per product) take at least %.3g ms at one "
                     "core's measured FMA peak", flops * 1e-6, mnk[0], mnk[1], mnk[2],
                     flops / one * 1e-6);
    }
    if (all > one)
        fprintf (f, " and %.3g ms at every core's together (%.0f GFLOP/s)", flops / all * 1e-6,
                 all);
    fputs (": a kernel of f32 FMAs is never faster, and its time over this floor is the "
           "share of the peak it reaches.", f);
    long long c[4];
    if (kf_prompt_chain_flops (spec, c) > 0)
        fprintf (f, " The product ideas below speak of the one that makes the output, tmp @ in2, "
                 "tmp being the intermediate in0 @ in1 ([%lld][%lld]) and in2 the operand whose "
                 "rows (%lld floats) the output's tile walks down; the first product's in1 is "
                 "only %lld floats wide.", c[0], c[2], c[3], c[2]);
    //  The implicit product's second operand is no tensor: a copy of it
    //  (im2col) is the input times the taps.
    if (groups > 0 && kf_prompt_conv_flops (spec, NULL, NULL) > 0) {
        char b[32];
        fprintf (f, " The product's second operand is the input read at shifted positions, "
                 "never stored: a copy of it laid out as K x N (im2col) would take %s, each "
                 "input value once per tap; a kernel that reads the input in place reuses "
                 "each value across the taps and all M output channels from its caches.",
                 kf_rates_bytes ((double) mnk[1] * (double) mnk[2] * (double) groups * 4.0, b,
                                 sizeof b));
    }
    fputc ('\n', f);
    //  Round 16: the softmax after q @ k^T had no count and no time.
    kf_prompt_epilogue_line (f, spec, d);
    kf_prompt_working_set_line (f, spec, d);
}
