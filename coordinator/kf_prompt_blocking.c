/*  kf_prompt_blocking.c - the register tile and cache blocks of an f32
 *  matrix product sized from the host's caches and vector width
 *  (kf_prompt_blocking.h), the sizes the product ideas name (MR, NR and
 *  the cache blocks) but cannot give: the ideas know no target.
 *
 *  The rules are the usual ones of a GotoBLAS/BLIS-style kernel: NR two
 *  vectors, MR as many rows as leave room in the registers for B's two
 *  vectors and A's broadcast; a KC x NR panel of B with an MR x KC sliver
 *  of A in half of L1d, an MC x KC block of A in half of L2, a KC x NC
 *  panel of B in half of a core's L3 share: the other half for what else
 *  passes through (C's tile, the next panel). Starting points to time,
 *  not optima.
 */
#include "kf_prompt_blocking.h"
#include "kf_prompt_layout.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_class.h"
#include "kf_prompt_target.h"
#include "kf_json.h"
#include "kf_rates.h"
#include "kf_task.h"
#include <math.h>
#include <string.h>

#define S_F32 4.0

int
kf_prompt_blocking (int lanes, double l1d, double l2, double l3_share, kf_blocking_t *b)
{
    if ((lanes != 8 && lanes != 16) || !(l1d > 0) || !(l2 > 0) || !b)
        return -1;
    kf_blocking_t r = { .lanes = lanes, .registers = lanes == 16 ? 32 : 16, .nr = 2 * lanes };
    //  MR rows of 2 accumulators each, beside B's 2 vectors and A's one
    //  broadcast: (16 - 3) / 2 = 6 with AVX2, (32 - 3) / 2 = 14 with
    //  AVX-512.
    r.mr = (r.registers - 3) / 2;
    r.kc = (long) floor (l1d / 2 / ((r.nr + r.mr) * S_F32)) / 8 * 8;
    if (r.kc < 8)
        return -1;
    r.mc = (long) floor (l2 / 2 / ((double) r.kc * S_F32)) / r.mr * r.mr;
    if (r.mc < r.mr)
        return -1;
    r.nc = l3_share > 0 ? (long) floor (l3_share / 2 / ((double) r.kc * S_F32)) / r.nr * r.nr
                        : 0;
    *b = r;
    return 0;
}

//  BYTES as "%.1f KiB" or "%.1f MiB".
static const char *
s_kib (double bytes, char *buf, size_t size)
{
    if (bytes >= 1024.0 * 1024)
        snprintf (buf, size, "%.1f MiB", bytes / (1024.0 * 1024));
    else
        snprintf (buf, size, "%.1f KiB", bytes / 1024);
    return buf;
}

//  One core's share of D's L3, 0 where not known or not believable.
static double
s_l3_share (json_t *d)
{
    double l3 = kf_jnum (d, "l3_bytes", 0), cpus = kf_jnum (d, "cores", 0);
    double sharing = kf_jnum (d, "l3_shared_cpus", 0);
    if (!(l3 > 0) || !(sharing >= 1) || (cpus > 0 && l3 > KF_PROMPT_L3_PER_CPU_MAX * cpus))
        return 0;
    return l3 / sharing;
}

//  Round 32: "MC = 1484" and "NC = 23808" for a product of M = 512 and
//  N = 1024, "round them to the task's shapes" left to the reader: the
//  blocks as the task's M, N and K make them.
static void
s_to_shapes (FILE *f, const long long mnk[3], const kf_blocking_t *b, double l2)
{
    if (mnk[0] <= 0 || mnk[1] <= 0 || mnk[2] <= 0)
        return;
    long long m = mnk[0], n = mnk[1], k = mnk[2];
    fprintf (f, ". For this task's M = %lld, N = %lld, K = %lld: ", m, n, k);
    if (b->kc >= k)
        fprintf (f, "K fits one KC block (KC = %lld, no k blocking)", k);
    else {
        //  Round 34: "KC = 80 makes them even" of K = 384 (5 x 80 is 400):
        //  a KC of whole vectors that divides K, in at most twice the
        //  blocks, or the last block's size.
        long long blocks = (k + b->kc - 1) / b->kc, even = 0, many = 0;
        for (long long n = blocks; n <= 2 * blocks && !even; n++)
            if (k % n == 0 && (k / n) % 8 == 0) {
                even = k / n;
                many = n;
            }
        char kc[160];
        if (even == b->kc)
            snprintf (kc, sizeof kc, "KC = %ld takes K in %lld even blocks", b->kc, blocks);
        else if (even)
            snprintf (kc, sizeof kc, "KC = %ld takes K in %lld blocks, and KC = %lld makes "
                      "%lld even ones", b->kc, blocks, even, many);
        else
            snprintf (kc, sizeof kc, "KC = %ld takes K in %lld blocks, the last of %lld",
                      b->kc, blocks, k - (blocks - 1) * b->kc);
        //  Round 40: "KC = 64 makes 8 even ones" beside "write the output
        //  once": blocking k stores partial sums between blocks. Where a
        //  whole K x NR panel of B sits in half the L2, say so. Round 43:
        //  the KC blocks first read as the plan; the one pass comes first.
        double panel = (double) k * b->nr * S_F32;
        char s1[32], s2[32];
        if (l2 > 0 && panel <= l2 / 2)
            fprintf (f, "a whole K x NR panel of B, %s, stays in the %s L2, so one pass over "
                     "all of K with the tile in registers, written once, is the simpler start "
                     "(blocking k instead stores each tile's partial sums and reads them back "
                     "between blocks, its epilogue after the last: %s)",
                     s_kib (panel, s1, sizeof s1), kf_rates_bytes (l2, s2, sizeof s2), kc);
        else
            fputs (kc, f);
    }
    //  Round 39: "MR = 14" for M = 1024 left a last tile of 2 rows, and
    //  the helper chose 8 x 48 itself: where MR does not divide M, the
    //  tile that does with the most accumulators its registers leave
    //  room for (NR whole vectors that divide N; the taller on a tie).
    if (m % b->mr != 0) {
        int rows = 0, vecs = 0;
        for (int r = b->mr - 1; r >= 4; r--)
            for (int v = 4; v >= 1 && m % r == 0; v--)
                if (r * v + v + 1 <= b->registers && n % ((long long) v * b->lanes) == 0
                    && r * v > rows * vecs) {
                    rows = r;
                    vecs = v;
                }
        fprintf (f, "; MR = %d leaves M a last tile of %lld rows (%lld = %lld x %d + %lld)",
                 b->mr, m % b->mr, m, m / b->mr, b->mr, m % b->mr);
        if (rows)
            fprintf (f, ", while %d x %d (MR = %d, NR = %d vectors: %d accumulators) divides "
                     "both M and N", rows, vecs * b->lanes, rows, vecs, rows * vecs);
    }
}

//  The blocks of SPEC's f32 product on host device D for the widest
//  vector of ISA (NULL: D's) into *B, its M, N and K into MNK, the
//  products it makes into *PRODUCTS and the vector's name into *NAME;
//  false where SPEC is no f32 product or D's caches are not known.
static bool
s_blocks (json_t *spec, json_t *d, const char *isa, kf_blocking_t *b, long long mnk[3],
          long long *products, const char **name)
{
    json_t *in0 = json_array_get (json_object_get (spec, "inputs"), 0);
    int dt = kf_dtype_from_name (kf_jstr (in0, "dtype"));
    int lanes = kf_prompt_vector_lanes (d, isa, name);
    mnk[0] = mnk[1] = mnk[2] = 0;
    *products = 1;
    return kf_prompt_matmul_count (spec, products, mnk) > 0 && dt >= 0
           && kf_dtype_size (dt) == 4
           && kf_prompt_blocking (lanes, kf_jnum (d, "l1d_bytes", 0), kf_jnum (d, "l2_bytes", 0),
                                  s_l3_share (d), b) == 0;
}

void
kf_prompt_blocking_line (FILE *f, json_t *spec, json_t *d, const char *isa)
{
    const char *name = NULL;
    double l1 = kf_jnum (d, "l1d_bytes", 0), l2 = kf_jnum (d, "l2_bytes", 0);
    double share = s_l3_share (d);
    kf_blocking_t b;
    long long mnk[3], products;
    if (!s_blocks (spec, d, isa, &b, mnk, &products, &name))
        return;
    char s1[32], s2[32], s3[32];
    fprintf (f, "  Block sizes for this host (derived from its caches and %s, f32: the MR, NR "
             "and cache blocks the ideas name): NR = %d (2 vectors of %d floats) and MR = %d "
             "(%d accumulators, B's 2 vectors and A's broadcast in the %d vector registers); "
             "KC = %ld, so a KC x NR panel of B (%s) and an MR x KC sliver of A (%s) take about "
             "half of the %s L1d", name, b.nr, b.lanes, b.mr, b.mr * 2, b.registers, b.kc,
             s_kib ((double) b.kc * b.nr * S_F32, s1, sizeof s1),
             s_kib ((double) b.mr * (double) b.kc * S_F32, s2, sizeof s2),
             kf_rates_bytes (l1, s3, sizeof s3));
    //  Round 43: "MC = 1484 ... NC = 23808" for M = N = 1024, then "MC
    //  is past M" at the line's end: a block past the task's dimension is
    //  said as the whole dimension, where it is given.
    long long kc = mnk[2] > 0 && mnk[2] < b.kc ? mnk[2] : b.kc;
    if (mnk[0] > 0 && b.mc >= mnk[0])
        fprintf (f, "; all %lld rows of A make one MC block (an M x KC block of A, %s, within "
                 "half of the %s L2)", mnk[0],
                 s_kib ((double) mnk[0] * (double) kc * S_F32, s1, sizeof s1),
                 kf_rates_bytes (l2, s2, sizeof s2));
    else
        fprintf (f, "; MC = %ld, so an MC x KC block of A (%s) takes about half of the %s L2",
                 b.mc, s_kib ((double) b.mc * (double) b.kc * S_F32, s1, sizeof s1),
                 kf_rates_bytes (l2, s2, sizeof s2));
    if (b.nc > 0 && mnk[1] > 0 && b.nc >= mnk[1])
        fprintf (f, "; all %lld columns of B make one NC panel (a KC x N panel of B, %s, within "
                 "half of one core's %s share of the L3)", mnk[1],
                 s_kib ((double) kc * (double) mnk[1] * S_F32, s1, sizeof s1),
                 s_kib (share, s2, sizeof s2));
    else if (b.nc > 0)
        fprintf (f, "; NC = %ld, so a KC x NC panel of B (%s) takes about half of one core's "
                 "%s share of the L3", b.nc, s_kib ((double) b.kc * (double) b.nc * S_F32, s1,
                                                     sizeof s1),
                 s_kib (share, s2, sizeof s2));
    //  Round 24: "KC = 184" beside the loop-order idea's "about 64 rows
    //  stay in L1" for the same @B read in place, 2560 bytes apart.
    //  Round 33: not where B is stored [N][K] and read along k as stored
    //  (a @ w.t()): "B's rows are 4096 bytes apart" was of a [K][N] B.
    long long stride = 0, rows = kf_prompt_strip_rows_l1 (spec, &stride);
    if (rows > 0 && rows < b.kc && !kf_prompt_rows_along_k (spec))
        fprintf (f, ". KC assumes B packed into panels of NR columns stored k after k; read "
                 "in place, B's rows are %lld bytes apart and about %lld of them stay in L1 at "
                 "once, so an unpacked strip takes a k block of at most about %lld rows", stride,
                 rows, rows);
    s_to_shapes (f, mnk, &b, l2);
    //  Round 40: an attempt at the dot-product order (B stored [N][K],
    //  read along k) was shown the outer-product tile alone.
    if (kf_prompt_rows_along_k (spec))
        fprintf (f, ". These sizes are for the outer-product order (a broadcast of A times "
                 "vectors of B's packed rows); in the dot-product order, which reads both "
                 "operands along k as stored, each output is one accumulator summed across "
                 "its lanes at the end: a tile of 4 rows of A by 4 of B (16 accumulators; "
                 "each step of %d along k loads 8 vectors for 16 FMAs), its 16 lane sums taken "
                 "together by a transpose-and-add tree rather than one by one", b.lanes);
    //  Round 38: (a @ w) * sigmoid(a @ v) got block sizes, a working set
    //  and ideas of one product, and the tile that reached 90% of one
    //  core (both products' accumulators for one broadcast of a) was
    //  never named.
    json_t *out0 = json_array_get (json_object_get (spec, "outputs"), 0);
    if (products == 2 && kf_prompt_rank (out0) == 2)
        fputs (". This task holds two products of one A (A times each of two B operands of "
               "one shape): one broadcast of A can feed both products' accumulators in one "
               "register tile (MR rows by NR / 2 columns of each, the same registers), and "
               "every panel of B and working set above counts twice, once for each B", f);
    fputs (". Starting points: time their neighbours.\n", f);
}

bool
kf_prompt_k_one_pass (json_t *spec, json_t *d)
{
    const char *name = NULL;
    kf_blocking_t b;
    long long mnk[3], products;
    //  The test of the Block sizes line (s_to_shapes).
    return s_blocks (spec, d, NULL, &b, mnk, &products, &name) && mnk[2] > b.kc
           && (double) mnk[2] * b.nr * S_F32 <= kf_jnum (d, "l2_bytes", 0) / 2;
}
