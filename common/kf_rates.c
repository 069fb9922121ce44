/*  kf_rates.c - a kernel's rates against the ceilings, in words
 *  (kf_rates.h): one set of rules for the prompt's position line and the
 *  host profile's summary.
 */
#include "kf_rates.h"

#include <stddef.h>

const char *
kf_rates_bytes (double bytes, char *buf, size_t size)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf (buf, size, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024)
        snprintf (buf, size, "%.1f MiB", bytes / (1024.0 * 1024));
    else if (bytes >= 1024)
        snprintf (buf, size, "%.0f KiB", bytes / 1024);
    else
        snprintf (buf, size, "%.0f B", bytes);
    return buf;
}

int
kf_rates_fits (const kf_rates_t *r)
{
    if (r->cold)
        return 0;
    if (r->bytes > 0 && r->cache_bytes > 0)
        return r->bytes <= r->cache_bytes;
    return r->held > 0 ? 1 : r->held == 0 ? 0 : -1;
}

//  A rate with three significant digits, never in exponent form.
static void
s_rate (FILE *f, double v)
{
    fprintf (f, v >= 100 ? "%.0f" : "%.3g", v);
}

//  The cache named with its size where known: "the 50.0 MiB L2".
static void
s_cache (FILE *f, const kf_rates_t *r)
{
    char b[32];
    const char *name = r->cache_name && *r->cache_name ? r->cache_name : "cache";
    if (r->cache_bytes > 0)
        fprintf (f, "the %s %s", kf_rates_bytes (r->cache_bytes, b, sizeof b), name);
    else
        fprintf (f, "the %s", name);
}

//  Round 19: "so treat memory bandwidth as the limit" stood beside 57
//  cycles a vector against an arithmetic budget of 39: above the copy
//  figure, the copy says nothing of which ceiling binds.
#define S_ABOVE_COPY                                                                       \
    "the copy figure understates what this memory delivers to this kernel (a copy also "  \
    "pays for its writes), so it does not say which ceiling binds: set the call's time "   \
    "against the Target section's floors (its bytes at the measured cold read rates) and " \
    "its arithmetic budget per vector"

static const char *
s_copy_name (const kf_rates_t *r)
{
    return r->copy_name ? r->copy_name : KF_RATES_COPY_NAME;
}

//  Memory above the copy figure: why, never as a share over 100%.
static void
s_above_copy (FILE *f, const kf_rates_t *r)
{
    char b[32];
    fprintf (f, ", above %s (%.0f GB/s)", s_copy_name (r), r->copy_gbs);
    int fits = kf_rates_fits (r);
    if (fits > 0) {
        fputs (": the working set", f);
        if (r->bytes > 0)
            fprintf (f, " (%s)", kf_rates_bytes (r->bytes, b, sizeof b));
        fputs (" fits in ", f);
        s_cache (f, r);
        fputs (", which keeps it between calls, so it is served from cache and memory "
               "bandwidth is not the limit", f);
    }
    //  Round 47: "above ... the fastest copy measured" read as past a
    //  ceiling, where a copy is one mix of reads and writes.
    else if (r->cold && r->mix_after)
        fputs (" although every call starts with its data flushed from the caches: a copy is "
               "one mix of reads and writes, not the memory's limit, and this kernel's mix "
               "goes faster; its reads and writes, each at its own measured rate, are the "
               "bound (below)", f);
    else if (r->cold)
        fputs (" although every call starts with its data flushed from the caches: "
               S_ABOVE_COPY, f);
    else if (fits == 0) {
        fputs (" although the working set", f);
        if (r->bytes > 0)
            fprintf (f, " (%s)", kf_rates_bytes (r->bytes, b, sizeof b));
        fputs (" is larger than ", f);
        s_cache (f, r);
        fputs (": " S_ABOVE_COPY, f);
    }
    else
        fputs (": some of the data is served from cache", f);
}

bool
kf_rates_write (FILE *f, const kf_rates_t *r)
{
    bool have_bw = r->gbs > 0, have_cp = r->gflops > 0;
    if (!have_bw && !have_cp)
        return false;
    char b[32];
    double mem_share = -1, cp_share = -1;
    if (have_bw) {
        fputs (" memory: ", f);
        if (r->bytes > 0)
            fprintf (f, "moves at least %s%s%s%s at ", kf_rates_bytes (r->bytes, b, sizeof b),
                     r->traffic ? " (" : "", r->traffic ? r->traffic : "",
                     r->traffic ? ")" : "");
        s_rate (f, r->gbs);
        fputs (" GB/s", f);
        if (r->copy_gbs > 0 && r->gbs > r->copy_gbs)
            s_above_copy (f, r);
        else if (r->copy_gbs > 0) {
            mem_share = r->gbs / r->copy_gbs;
            fprintf (f, ", %.0f%% of %s (%.0f GB/s)", 100 * mem_share, s_copy_name (r),
                     r->copy_gbs);
        }
        if (r->ref_gbs > 0) {
            fputs ("; the reference reaches ", f);
            s_rate (f, r->ref_gbs);
            fputs (" GB/s", f);
        }
        fputs (";", f);
    }
    if (have_cp) {
        fputs (" compute: ", f);
        s_rate (f, r->gflops);
        fputs (" GFLOP/s", f);
        if (r->peak_gflops > 0 && r->gflops > r->peak_gflops)
            fprintf (f, ", above the measured f32 FMA peak (%.0f GFLOP/s): the task's "
                     "operation count includes work cheaper than an FMA, or the kernel does "
                     "less than it counts", r->peak_gflops);
        else if (r->peak_gflops > 0) {
            cp_share = r->gflops / r->peak_gflops;
            fprintf (f, ", %.1f%% of the measured peak (%.0f GFLOP/s)", 100 * cp_share,
                     r->peak_gflops);
        }
        if (r->ref_gflops > 0) {
            fputs ("; the reference reaches ", f);
            s_rate (f, r->ref_gflops);
            fputs (" GFLOP/s", f);
        }
    }
    else
        fprintf (f, " compute: %s (%s)", r->estimated ? "estimated, not counted" : "not known",
                 r->uncounted ? r->uncounted : "the task gives no operation count");
    //  Which ceiling is nearer, where both shares mean something.
    if (mem_share >= 0 && cp_share >= 0)
        fprintf (f, "; nearer the %s ceiling (%.0f%% against %.0f%%)",
                 cp_share > mem_share ? "compute" : "memory",
                 100 * (cp_share > mem_share ? cp_share : mem_share),
                 100 * (cp_share > mem_share ? mem_share : cp_share));
    fputs (".", f);
    return true;
}
