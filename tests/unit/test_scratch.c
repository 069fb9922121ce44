/*  test_scratch.c - the host's scratch arena (exec-worker/kf_scratch.c):
 *  every block 64-byte aligned and writable; the same sizes in the same
 *  order back at the same addresses after a reset, their pages resident
 *  (no page faults touching them again, 40 MiB included); a call that
 *  needs more grows the arena once and the calls after it map nothing;
 *  sizes that keep changing are folded into one mapping; the 65th block,
 *  a call past the byte limit and a size that would wrap are refused with
 *  NULL and leave the blocks already given alone; destroy unmaps it all. */
#include "../kf_test.h"
#include "../../exec-worker/kf_scratch.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIB ((size_t) 1 << 20)

static size_t s_page;

static long
s_minflt (void)
{
    struct rusage ru;
    getrusage (RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

//  Writes a byte in every page of P (BYTES long).
static void
s_touch (char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += s_page)
        p[i] = (char) i;
    p[bytes - 1] = 1;
}

//  Whether every page of P (BYTES long) is resident.
static bool
s_resident (const char *p, size_t bytes)
{
    uintptr_t lo = (uintptr_t) p / s_page * s_page;
    size_t n = ((uintptr_t) p + bytes - lo + s_page - 1) / s_page;
    unsigned char *vec = malloc (n);
    bool all = vec && mincore ((void *) lo, n * s_page, vec) == 0;
    for (size_t i = 0; all && i < n; i++)
        all = vec[i] & 1;
    free (vec);
    return all;
}

//  Small and odd sizes: 64-byte aligned, apart, writable; the same
//  addresses after a reset.
static void
s_alignment_and_reuse (void)
{
    static const size_t sizes[] = { 1, 3, 64, 100, 4097, 0, 65 };
    enum { N = sizeof sizes / sizeof sizes[0] };
    kf_scratch_t *a = kf_scratch_new (0);
    CHECK (a && kf_scratch_mapped (a) == 0 && kf_scratch_regions (a) == 0);
    char *p[N], *q[N];
    bool aligned = true, apart = true;
    for (int i = 0; i < N; i++) {
        p[i] = kf_scratch_alloc (a, sizes[i]);
        CHECK (p[i] != NULL);
        if (!p[i])
            return;
        aligned &= (uintptr_t) p[i] % KF_SCRATCH_ALIGN == 0;
        memset (p[i], 0x5A, sizes[i] ? sizes[i] : 1);
        for (int j = 0; j < i; j++)
            apart &= p[j] + (sizes[j] ? sizes[j] : 1) <= p[i] || p[i] + sizes[i] <= p[j];
    }
    CHECK (aligned);
    CHECK (apart);
    CHECK (kf_scratch_regions (a) == 1);          // small blocks share one mapping
    size_t mapped = kf_scratch_mapped (a);
    kf_scratch_reset (a);
    bool same = true;
    for (int i = 0; i < N; i++)
        same &= (q[i] = kf_scratch_alloc (a, sizes[i])) == p[i];
    CHECK (same);
    CHECK (kf_scratch_mapped (a) == mapped);
    kf_scratch_destroy (&a);
    CHECK (a == NULL);
    kf_scratch_destroy (&a);                      // twice is harmless
    kf_scratch_reset (NULL);
    CHECK (kf_scratch_alloc (NULL, 1) == NULL);
}

//  The fixture's blocks (1, 8 and 40 MiB): resident from the second
//  call, where glibc's malloc mapped the 40 MiB anew every call.
static void
s_resident_from_second_call (void)
{
    static const size_t sizes[3] = { 1 * MIB, 8 * MIB, 40 * MIB };
    kf_scratch_t *a = kf_scratch_new (0);
    char *first[3];
    for (int b = 0; b < 3; b++) {
        first[b] = kf_scratch_alloc (a, sizes[b]);
        CHECK (first[b] != NULL);
        if (!first[b])
            return;
        s_touch (first[b], sizes[b]);
    }
    kf_scratch_reset (a);
    size_t mapped = kf_scratch_mapped (a);
    for (int call = 2; call <= 4; call++) {
        bool same = true, resident = true;
        long f0 = s_minflt ();
        for (int b = 0; b < 3; b++) {
            char *p = kf_scratch_alloc (a, sizes[b]);
            same &= p == first[b];
            if (p) {
                resident &= s_resident (p, sizes[b]);
                s_touch (p, sizes[b]);
            }
        }
        long faults = s_minflt () - f0;
        kf_scratch_reset (a);
        CHECK (same);
        CHECK (resident);
        CHECK (faults < 16);
        if (faults >= 16)
            fprintf (stderr, "call %d: %ld page faults touching 49 MiB of scratch\n", call,
                     faults);
        CHECK (kf_scratch_mapped (a) == mapped);
    }
    kf_scratch_destroy (&a);
}

//  A call that needs more than the arena holds: a mapping more for what
//  does not fit, kept, so the call after maps nothing and faults nothing.
static void
s_growth (void)
{
    kf_scratch_t *a = kf_scratch_new (0);
    char *small = kf_scratch_alloc (a, MIB);
    CHECK (small != NULL);
    if (!small)
        return;
    s_touch (small, MIB);
    kf_scratch_reset (a);
    CHECK (kf_scratch_regions (a) == 1);
    char *p = kf_scratch_alloc (a, MIB), *big = kf_scratch_alloc (a, 16 * MIB);
    CHECK (p == small && big != NULL);
    if (!big)
        return;
    s_touch (big, 16 * MIB);
    CHECK (kf_scratch_regions (a) == 2);
    size_t mapped = kf_scratch_mapped (a);
    CHECK (mapped >= 17 * MIB && mapped < 18 * MIB);
    kf_scratch_reset (a);
    long f0 = s_minflt ();
    char *p2 = kf_scratch_alloc (a, MIB), *big2 = kf_scratch_alloc (a, 16 * MIB);
    CHECK (p2 == small && big2 == big);
    if (p2 && big2) {
        s_touch (p2, MIB);
        s_touch (big2, 16 * MIB);
    }
    CHECK (s_minflt () - f0 < 16);
    CHECK (kf_scratch_mapped (a) == mapped && kf_scratch_regions (a) == 2);
    kf_scratch_reset (a);
    //  A smaller call later takes its blocks from the same mappings.
    CHECK (kf_scratch_alloc (a, 100) == small);
    CHECK (kf_scratch_mapped (a) == mapped);
    kf_scratch_destroy (&a);
}

//  Sizes that grow call after call: a mapping each, until the mappings
//  hold far more than any call took; then one as large as the most a
//  call took. Nothing is touched here, so nothing becomes resident.
static void
s_fold (void)
{
    kf_scratch_t *a = kf_scratch_new (0);
    for (size_t k = 1; k <= 5; k++) {
        CHECK (kf_scratch_alloc (a, k * MIB) != NULL);
        kf_scratch_reset (a);
        CHECK (kf_scratch_regions (a) == (int) k);   // 1+..+k MiB mapped, under 3k + k
    }
    CHECK (kf_scratch_alloc (a, 6 * MIB) != NULL);
    CHECK (kf_scratch_regions (a) == 6 && kf_scratch_mapped (a) == 21 * MIB);
    kf_scratch_reset (a);                            // 21 MiB > 2 * 6 + 6
    CHECK (kf_scratch_regions (a) == 1 && kf_scratch_mapped (a) == 6 * MIB);
    char *p = kf_scratch_alloc (a, 6 * MIB);
    CHECK (p != NULL && kf_scratch_regions (a) == 1);
    kf_scratch_reset (a);
    CHECK (kf_scratch_alloc (a, 6 * MIB) == p);
    kf_scratch_destroy (&a);

    //  64 blocks of a mapping each, then 64 more: the table holds them,
    //  and the reset folds the 128 into one.
    a = kf_scratch_new (0);
    bool all = true;
    for (int b = 0; b < KF_SCRATCH_MAX_BLOCKS; b++)
        all &= kf_scratch_alloc (a, MIB + 1) != NULL;
    CHECK (all && kf_scratch_regions (a) == KF_SCRATCH_MAX_BLOCKS);
    kf_scratch_reset (a);
    CHECK (kf_scratch_regions (a) == KF_SCRATCH_MAX_BLOCKS);
    for (int b = 0; b < KF_SCRATCH_MAX_BLOCKS; b++)
        all &= kf_scratch_alloc (a, 2 * MIB + 1) != NULL;
    CHECK (all && kf_scratch_regions (a) == 2 * KF_SCRATCH_MAX_BLOCKS);
    kf_scratch_reset (a);
    CHECK (kf_scratch_regions (a) == 1);
    CHECK (kf_scratch_mapped (a) >= (size_t) KF_SCRATCH_MAX_BLOCKS * (2 * MIB + 64));
    kf_scratch_destroy (&a);
}

//  Refusals: NULL, and the blocks already given stay usable.
static void
s_limits (void)
{
    kf_scratch_t *a = kf_scratch_new (0);
    char *p[KF_SCRATCH_MAX_BLOCKS];
    bool all = true;
    for (int b = 0; b < KF_SCRATCH_MAX_BLOCKS; b++)
        all &= (p[b] = kf_scratch_alloc (a, 1000)) != NULL;
    CHECK (all);
    CHECK (kf_scratch_alloc (a, 1) == NULL);      // the 65th block
    if (all)
        memset (p[KF_SCRATCH_MAX_BLOCKS - 1], 1, 1000);
    kf_scratch_reset (a);
    CHECK (kf_scratch_alloc (a, 1000) == p[0]);   // a new call has its 64 again
    kf_scratch_reset (a);
    CHECK (kf_scratch_alloc (a, SIZE_MAX) == NULL);
    CHECK (kf_scratch_alloc (a, SIZE_MAX - 10) == NULL);
    CHECK (kf_scratch_alloc (a, KF_SCRATCH_MAX_BYTES + 1) == NULL);
    kf_scratch_destroy (&a);

    a = kf_scratch_new (4 * MIB);
    char *x = kf_scratch_alloc (a, 3 * MIB);
    CHECK (x != NULL);
    CHECK (kf_scratch_alloc (a, MIB + 1) == NULL);    // past 4 MiB in all
    char *y = kf_scratch_alloc (a, MIB);              // exactly 4 MiB in all
    CHECK (y != NULL);
    CHECK (kf_scratch_alloc (a, 1) == NULL);
    if (x && y) {
        memset (x, 2, 3 * MIB);
        memset (y, 3, MIB);
        CHECK (x[3 * MIB - 1] == 2 && y[0] == 3);
    }
    kf_scratch_reset (a);
    CHECK (kf_scratch_alloc (a, 4 * MIB) != NULL);    // the limit is a call's
    kf_scratch_destroy (&a);
}

//  Destroy unmaps every mapping.
static void
s_unmapped (void)
{
    kf_scratch_t *a = kf_scratch_new (0);
    char *p = kf_scratch_alloc (a, 2 * MIB), *q = kf_scratch_alloc (a, 8 * MIB);
    CHECK (p && q && kf_scratch_regions (a) == 2);
    if (!p || !q)
        return;
    s_touch (p, 2 * MIB);
    kf_scratch_destroy (&a);
    unsigned char vec[1];
    CHECK (mincore ((void *) ((uintptr_t) p / s_page * s_page), s_page, vec) == -1
           && errno == ENOMEM);
    CHECK (mincore ((void *) ((uintptr_t) q / s_page * s_page), s_page, vec) == -1
           && errno == ENOMEM);
}

int
main (void)
{
    s_page = (size_t) sysconf (_SC_PAGESIZE);
    s_alignment_and_reuse ();
    s_resident_from_second_call ();
    s_growth ();
    s_fold ();
    s_limits ();
    s_unmapped ();
    return kf_test_done ("test_scratch");
}
