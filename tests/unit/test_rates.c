/*  test_rates.c - the words for a kernel's rates against the ceilings
 *  (common/kf_rates.h): both rates always, no share over 100%, no cache
 *  said to hold a working set larger than it.
 */
#include "../kf_test.h"
#include "kf_rates.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024)

static char *
s_words (const kf_rates_t *r)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&out, &len);
    kf_rates_write (f, r);
    fclose (f);
    return out;
}

int
main (void)
{
    //  A compute-bound GEMM: its bytes are a small share, its FLOP/s a
    //  large one, and the words say which ceiling is near.
    kf_rates_t gemm = { .bytes = 12 * MIB, .gbs = 5, .copy_gbs = 100, .gflops = 800,
                        .peak_gflops = 1000, .held = -1 };
    char *w = s_words (&gemm);
    CHECK (kf_test_has (w, " memory: moves at least 12.0 MiB at 5 GB/s, 5% of the measured copy "
                           "bandwidth (100 GB/s);"));
    CHECK (kf_test_has (w, " compute: 800 GFLOP/s, 80.0% of the measured peak (1000 GFLOP/s)"));
    CHECK (kf_test_has (w, "; nearer the compute ceiling (80% against 5%)."));
    free (w);
    gemm.gflops = 10;
    w = s_words (&gemm);
    CHECK (kf_test_has (w, "nearer the memory ceiling (5% against 1%)"));
    free (w);

    //  Above the copy figure with cold caches (the host): explained, not
    //  "202%", and nothing served from cache.
    kf_rates_t host = { .bytes = 8 * MIB, .gbs = 202, .copy_gbs = 100, .held = 1,
                        .cold = true };
    w = s_words (&host);
    CHECK (!kf_test_has (w, "202%") && !kf_test_has (w, "fits") && !kf_test_has (w, "served from cache"));
    CHECK (kf_test_has (w, "above the measured copy bandwidth (100 GB/s) although every call starts "
                           "with its data flushed from the caches"));
    CHECK (kf_test_has (w, "compute: not known (the task gives no operation count)"));
    CHECK (!kf_test_has (w, "nearer"));
    free (w);

    //  A GPU: 8 MiB fits the 50 MiB L2 that keeps it between calls.
    kf_rates_t small = { .bytes = 8 * MIB, .gbs = 8000, .copy_gbs = 4000, .cache_bytes = 50 * MIB,
                         .cache_name = "L2", .held = -1 };
    w = s_words (&small);
    CHECK (kf_test_has (w, "the working set (8.0 MiB) fits in the 50.0 MiB L2, which keeps it between "
                           "calls, so it is served from cache"));
    CHECK (!kf_test_has (w, "200%"));
    free (w);

    //  64 MiB never fits a 50 MiB L2, whatever else says it stays.
    kf_rates_t big = small;
    big.bytes = 64 * MIB;
    big.held = 1;
    w = s_words (&big);
    CHECK (!kf_test_has (w, "fits") && !kf_test_has (w, "served from cache"));
    CHECK (kf_test_has (w, "although the working set (64.0 MiB) is larger than the 50.0 MiB L2: the "
                           "copy figure understates"));
    free (w);

    //  No size known: the worker's judgement, named vaguely; none: vaguer.
    kf_rates_t unsized = { .bytes = 8 * MIB, .gbs = 300, .copy_gbs = 100, .held = 1 };
    w = s_words (&unsized);
    CHECK (kf_test_has (w, "fits in the cache, which keeps it between calls"));
    free (w);
    unsized.held = 0;
    w = s_words (&unsized);
    CHECK (kf_test_has (w, "is larger than the cache") && !kf_test_has (w, "fits"));
    free (w);
    unsized.held = -1;
    w = s_words (&unsized);
    CHECK (kf_test_has (w, "some of the data is served from cache") && !kf_test_has (w, "fits"));
    free (w);

    //  Compute above the f32 FMA peak is said so, not as a share.
    kf_rates_t hot = { .gflops = 1500, .peak_gflops = 1000, .held = -1 };
    w = s_words (&hot);
    CHECK (kf_test_has (w, " compute: 1500 GFLOP/s, above the measured f32 FMA peak (1000 GFLOP/s)")
           && !kf_test_has (w, "150%"));
    CHECK (!kf_test_has (w, "memory"));
    free (w);

    //  Nothing measured: nothing written.
    kf_rates_t none = { .held = -1 };
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&out, &len);
    CHECK (!kf_rates_write (f, &none));
    fclose (f);
    CHECK (len == 0);
    free (out);

    //  Round 39: an estimate in place of a count says so, not "not known".
    kf_rates_t est = { .bytes = 8 * MIB, .gbs = 30, .copy_gbs = 100, .held = 0,
                       .uncounted = "about 20 vector instructions a vector", .estimated = true };
    char *we = s_words (&est);
    CHECK (we && strstr (we, "compute: estimated, not counted (about 20 vector instructions"));
    CHECK (we && !strstr (we, "not known"));
    free (we);
    est.estimated = false;
    we = s_words (&est);
    CHECK (we && strstr (we, "compute: not known (about 20"));
    free (we);

    char b[32];
    CHECK (!strcmp (kf_rates_bytes (512 * 1024, b, sizeof b), "512 KiB"));
    CHECK (!strcmp (kf_rates_bytes (3 * 1024.0 * MIB, b, sizeof b), "3.0 GiB"));
    return kf_test_done ("test_rates");
}
