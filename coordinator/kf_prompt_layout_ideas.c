/*  kf_prompt_layout_ideas.c - the host ideas for a matrix product that
 *  follow its operands' layout, and the Target section's working-set line
 *  (kf_prompt_layout.h).
 *
 *  The reading of the layout itself (which operand is used transposed,
 *  the Data section's note) is kf_prompt_layout.c; this file only turns a
 *  layout it read into ideas and figures.
 */
#include "kf_prompt_layout.h"
#include "kf_prompt_blocking.h"
#include "kf_prompt_class.h"
#include "kf_prompt_epilogue.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_target.h"
#include "kf_rates.h"
#include "kf_str.h"
#include "kf_task.h"
#include "kf_json.h"
#include "kf_prompt_budget.h"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  The product ideas that follow the layout

//  TEMPLATE with each "@A" and "@B" replaced by A and B (caller frees).
static char *
s_fill (const char *template, const char *a, const char *b)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    for (const char *p = template; *p; p++)
        if (p[0] == '@' && (p[1] == 'A' || p[1] == 'B'))
            fputs (*++p == 'A' ? a : b, f);
        else
            fputc (*p, f);
    fclose (f);
    return text;
}

//  TEMPLATE filled for x @ x^T of the operand A, where "@A and @B" and
//  "rows of @A against a few rows of @B" would name A twice (rounds 42,
//  43: "the rows of in0 and in0", "a few rows of in0 against a few rows
//  of in0").
static char *
s_fill_self (const char *template, const char *a)
{
    static const struct { const char *from, *to; } twice[] = {
        { "@A and @B", "@A (both operands)" },
        { "rows of @A against a few rows of @B", "rows of @A against a few other rows of it" },
    };
    char *text = strdup (template);
    for (size_t i = 0; text && i < sizeof twice / sizeof twice[0]; i++) {
        const char *at = strstr (text, twice[i].from);
        if (!at)
            continue;
        char *next = kf_strdupf ("%.*s%s%s", (int) (at - text), text, twice[i].to,
                                 at + strlen (twice[i].from));
        free (text);
        text = next;
    }
    char *filled = text ? s_fill (text, a, a) : NULL;
    free (text);
    return filled;
}

//  Round 16: q @ k^T with K = 64 was offered cache blocking "over k",
//  where a row along k is 256 bytes. The rows of a 32 x 32 tile's two
//  operands over all of k (64 rows) are said to fit L1 comfortably when
//  they take at most half of it: of S_L1_ASSUMED (the smallest L1d of
//  recent x86 cores) where the ideas are written, which know no target,
//  of the reported L1d in the Target section's working-set line.
#define S_L1_ASSUMED 32768.0
#define S_TILE_ROWS 64

//  The product's K and its operands' element size; false where unknown.
static bool
s_k (json_t *spec, long long *k, double *elem)
{
    long long mnk[3] = { 0, 0, 0 };
    json_t *in0 = json_array_get (json_object_get (spec, "inputs"), 0);
    int dt = kf_dtype_from_name (kf_jstr (in0, "dtype"));
    *elem = dt >= 0 ? (double) kf_dtype_size (dt) : 0;
    if (!(kf_prompt_matmul_flops (spec, mnk) > 0) || !(*elem > 0))
        return false;
    *k = mnk[2];
    return *k > 0;
}

char *
kf_prompt_short_k_block (json_t *spec, const char *a, const char *b, bool rows)
{
    long long k;
    double elem;
    if (!s_k (spec, &k, &elem) || S_TILE_ROWS * k * elem > S_L1_ASSUMED / 2)
        return NULL;
    //  Round 42: "a row of in0 or in0" of x @ x.t().
    bool one = !strcmp (a, b);
    return kf_strdupf ("keep each operand's block in L1/L2 while it is reused, by cache "
                       "blocking over the %s, not over k: a row of %s%s%s along k is %.0f "
                       "bytes (K = %lld), so a 32 x 32 tile's rows of both over all of k take "
                       "%.0f KiB, at most half of a 32 KiB L1 (the Target section sets the "
                       "working set against this host's caches)",
                       rows ? "rows of both" : "rows and columns of the output", a,
                       one ? "" : " or ", one ? "" : b, (double) k * elem, k,
                       S_TILE_ROWS * k * elem / 1024);
}

//  Round 21: the threads idea asks each thread's share of the operand it
//  re-reads to stay in its own L2, and at 384 x 1024 @ (768 x 1024)^T on
//  two cores that share is 1.5 MiB of the second operand against a 512
//  KiB L2: the model had to work out that it cannot, and that each
//  thread still blocks k. The shares, from operands of A and B bytes,
//  against each core's L2.
static void
s_thread_shares (FILE *f, json_t *spec, double a, double b, double l2, json_t *d)
{
    double cores = kf_prompt_host_cores (d);
    if (!(cores >= 2))
        return;
    char sa[32], sb[32], s2[32];
    fprintf (f, " Split over the %.0f cores (an L2 of %s each): by column blocks a thread "
             "re-reads its 1/%.0f of the second operand, %s, for all of the first; by row "
             "blocks its 1/%.0f of the first, %s, for all of the second", cores,
             kf_rates_bytes (l2, s2, sizeof s2), cores, kf_rates_bytes (b / cores, sb, sizeof sb),
             cores, kf_rates_bytes (a / cores, sa, sizeof sa));
    double small = fmin (a, b) / cores;
    if (small > l2)
        fputs (": neither share fits its L2, so each thread still blocks k (and its share's "
               "rows or columns) inside its share, as one core's kernel does.", f);
    else if (fmax (a, b) / cores > l2)
        fprintf (f, ": only the %s split's share fits its L2.",
                 b <= a ? "column" : "row");
    else
        fputs (": either split's share fits its L2.", f);
    //  Round 24: the two splits read as equals beside an epilogue that
    //  reduces over each column's rows.
    kf_prompt_epilogue_split (f, spec);
}

void
kf_prompt_working_set_line (FILE *f, json_t *spec, json_t *d)
{
    long long mnk[3] = { 0, 0, 0 }, k;
    double flops = kf_prompt_matmul_flops (spec, mnk), elem;
    double l1 = kf_jnum (d, "l1d_bytes", 0), l2 = kf_jnum (d, "l2_bytes", 0);
    if (!(flops > 0) || !(l1 > 0) || !(l2 > 0) || !s_k (spec, &k, &elem))
        return;
    double batch = flops / (2.0 * (double) mnk[0] * (double) mnk[1] * (double) k);
    double a = (double) mnk[0] * (double) k * elem, b = (double) mnk[1] * (double) k * elem;
    kf_product_t p;
    kf_prompt_product_read (spec, &p);
    char ba[32], bb[32], bc[32], b1[32], b2[32];
    //  Round 52: the chain's second product's figures under the first's
    //  names ("in0 (x in its code) is M x K = 2048 x 64").
    bool chain = kf_prompt_chain_flops (spec, NULL) > 0;
    fprintf (f, "  Working set of one product%s: the first operand",
             chain ? " (the chain's second, which makes the output)"
             : *p.b2 ? " (of the two, which share it)" : batch > 1.5 ? " (one batch)" : "");
    if (chain)
        fputs (" tmp (the intermediate, in0 @ in1)", f);
    else if (*p.a) {
        fputc (' ', f);
        kf_prompt_product_name (f, spec, p.a);
    }
    //  Round 18: a @ b with b stored [K][N] was called "N x K" with "a row
    //  along k" of both: each operand by its own layout (round 15's
    //  a.T @ b reads neither along k).
    bool a_k = p.kind != KF_PRODUCT_FIRST_TRANSPOSED && p.kind != KF_PRODUCT_BOTH_TRANSPOSED;
    bool b_k = p.kind != KF_PRODUCT_PLAIN && p.kind != KF_PRODUCT_FIRST_TRANSPOSED;
    fprintf (f, a_k ? " is M x K = %lld x %lld, %s; the second" : " is stored K x M = %lld x "
             "%lld (along m), %s; the second", a_k ? mnk[0] : k, a_k ? k : mnk[0],
             kf_rates_bytes (a, ba, sizeof ba));
    if (chain)
        fputs (" in2", f);
    else if (*p.b) {
        fputc (' ', f);
        kf_prompt_product_name (f, spec, p.b);
    }
    //  Round 38: the other product's second operand, of the same shape.
    if (*p.b2) {
        fputs (" and the other product's ", f);
        kf_prompt_product_name (f, spec, p.b2);
        fputs (b_k ? ", each" : " are each stored", f);
    }
    else if (!b_k)
        fputs (" is stored", f);
    fprintf (f, b_k ? " N x K = %lld x %lld, %s" : " K x N = %lld x %lld (along n), %s",
             b_k ? mnk[1] : k, b_k ? k : mnk[1], kf_rates_bytes (b, bb, sizeof bb));
    //  Round 46: "its output M x N = 2048 x 1024, 8.0 MiB" of a product
    //  whose rows are each reduced to one value, the task's output 8 KiB.
    kf_epilogue_t epi;
    bool reduced = kf_prompt_epilogue (spec, &epi) && epi.reduced;
    fprintf (f, reduced ? "; the product M x N = %lld x %lld, %s, is never the output (each of "
                          "its rows is reduced to one value, so a kernel need not store it)"
                          ". Against this host's L1d of %s and L2 of %s: "
                        : "; its output M x N = %lld x %lld, %s. Against this host's L1d of %s "
                          "and L2 of %s: ",
             mnk[0], mnk[1], kf_rates_bytes ((double) mnk[0] * (double) mnk[1] * elem,
                                                      bc, sizeof bc),
             kf_rates_bytes (l1, b1, sizeof b1), kf_rates_bytes (l2, b2, sizeof b2));
    if (a + b <= l2 / 2)
        fputs ("both operands fit L2 together with room to spare, so after their first read "
               "each reuse comes from L2 at worst, and what cache blocking can add is keeping "
               "the block in use in L1", f);
    else if (a + b <= l2)
        fputs ("both operands fit L2 together, with little room beside them", f);
    else
        fputs ("the two operands do not fit L2 together: blocks sized to L2 are what cache "
               "blocking buys", f);
    double tile = S_TILE_ROWS * k * elem;
    if (a_k && b_k)
        fprintf (f, "; a row along k is %.0f bytes, so a 32 x 32 tile's rows of both over all "
                 "of k (%.0f KiB)", (double) k * elem, tile / 1024);
    else {
        fputs ("; a 32 x 32 tile's operands over all of k, ", f);
        for (int side = 0; side < 2; side++) {
            bool along = side ? b_k : a_k;
            double other = (double) (side ? mnk[1] : mnk[0]);
            if (along)
                fprintf (f, "32 rows of the %s along k (%.0f bytes each)",
                         side ? "second" : "first", (double) k * elem);
            else
                fprintf (f, "32 %s of the %s (%.0f bytes of each of its %lld rows along %s, "
                         "%.0f bytes apart)", side ? "columns" : "rows", side ? "second" : "first",
                         32 * elem, k, side ? "n" : "m", other * elem);
            fputs (side ? ", " : " and ", f);
        }
        fprintf (f, "take %.0f KiB,", tile / 1024);
    }
    if (tile <= l1 / 2)
        fputs (" fit half of L1 and blocking over k has nothing to gain.", f);
    else
        //  Round 17: "128 KiB take more than half of L1" beside a 48 KiB L1.
        fprintf (f, " %s: blocking over k keeps a slice of them there.",
                 tile > l1 ? "do not fit L1" : "take more than half of L1");
    s_thread_shares (f, spec, a, b, l2, d);
    fputc ('\n', f);
}

//  Round 20: nothing said how to split on a host whose cores each have
//  their own L2.
#define S_THREADS "use every core, by output blocks split across threads, each thread's " \
                  "share of the operand it re-reads kept in its own L2 (by column blocks " \
                  "each reads 1/T of @B and all of @A; by row blocks 1/T of @A and all of @B)"
//  Round 41: for x @ x.t() that read "by column blocks each reads 1/T of
//  in0 and all of in0; by row blocks 1/T of in0 and all of in0".
#define S_THREADS_SELF "use every core, by output blocks split across threads, each " \
                       "thread's rows of @A kept in its own L2 (a block reads its 1/T of " \
                       "@A's rows against all of them; where one triangle is computed, " \
                       "split its tiles into equal work, not its rows into equal ranges)"
#define S_EPILOGUE "write the output once, by fusing the epilogue (bias, activation) into the " \
                   "product loop" KF_PROMPT_EPILOGUE_K_CHUNKS
#define S_BLOCKS "keep each operand's block in L1/L2 while it is reused, by cache blocking of " \
                 "all three loops around the kernel's inner loops"

//  Round 6: y = x @ W^T of nn.Linear reads both operands along k already,
//  and packing the weight "for unit stride" lost twice; round 14: a @ b.T
//  reads the same. Round 15: these said "rows of x ... rows of W" beside a
//  note that named in0 and in1, and the general list's "dot products
//  along k where both operands are contiguous along k" went to a.T @ b,
//  where neither is. Each layout has its own texts, with its operands'
//  names.
static const char *const s_rows_k[] = {
    "use each loaded value several times from registers, by a register-blocked micro-kernel "
    "of dot products along k: a few rows of @A against a few rows of @B at a time, each read "
    "along k as stored, one vector accumulator per output",
    "keep the rows of @A and @B that are reused in L1/L2, by cache blocking over the rows of "
    "both and over k",
    S_THREADS,
    //  Rounds 42-44: read as at odds with a register tile, whose outputs
    //  are independent chains already: it is the dot-product order's.
    "keep more FMAs in flight, by unrolling k so each output has several independent vector "
    "accumulators (in the dot-product order, where a tile of few outputs has fewer chains than "
    "the FMA latency times its issue rate; a tile of that many outputs or more has them "
    "already, and a second accumulator per output doubles its registers)",
    //  Round 17: every idea was a dot product, each with a lane sum.
    "use each loaded value several times from registers with no sum across lanes per output, "
    //  Round 48: "(made once per call; not for unit stride, which both
    //  already have)" read as "do not make the copy".
    "by the outer-product order over a copy of @B's block transposed to [K][NR] panels (the "
    "copy made once per call for the tile's order of reads, not for unit stride: both "
    "operands are read along k at unit stride already): a tile of MR x NR outputs "
    "in vector registers over all of k, each @A[i][k] broadcast against the panel's row k",
    S_EPILOGUE, NULL };
static const char *const s_first_t[] = {
    "make every load contiguous, by the outer-product order: a tile of the output (MR rows by "
    "NR columns) kept in vector registers over all of k, and at each k each of the MR values "
    "@A[k][i0..i0+MR] (a contiguous run of @A's row k) broadcast against the vectors of "
    "@B[k][j0..j0+NR]; neither operand is contiguous along k, so dot products along k do not "
    "fit",
    "use each loaded value several times from registers, by a register-blocked FMA "
    "micro-kernel inside cache blocks, over panels of @A and @B copied in the order it reads "
    "them: the runs @A[k][i0..i0+MR] and @B[k][j0..j0+NR] one k after the other, a plain "
    "strided copy with no transpose (blocking, packing and micro-kernel as one change)",
    S_THREADS, S_BLOCKS,
    "read each cache block as one contiguous stream, by packing the blocks of @A and @B "
    "inside the cache blocks: copies of the runs @A[k][i0..i0+MR] and @B[k][j0..j0+NR], no "
    "transpose (unpacked, a block's rows lie a whole row of the operand apart)",
    S_EPILOGUE, NULL };
static const char *const s_both_t[] = {
    "make every load contiguous, by the outer-product order of the transposed output: C^T = "
    "@B @ @A, a tile of C^T kept in vector registers over all of k, each @B[j][k] broadcast "
    "against the vectors of @A[k][i0..i0+V] (a contiguous run of @A's row k), the tile "
    "transposed as it is stored",
    "use each loaded value several times from registers, by a register-blocked FMA "
    "micro-kernel inside cache blocks, over panels packed in the order it reads them: @B's "
    "block transposed to [K][N] once, @A's runs @A[k][i0..i0+MR] copied as they are "
    "(blocking, packing and micro-kernel as one change)",
    S_THREADS, S_BLOCKS,
    "read both operands along their rows, by packing each cache block of @B transposed (as "
    "[K][N]) inside the cache blocks, so the outer-product order reads @A[k][i0..i0+MR] and "
    "the packed row k of @B",
    S_EPILOGUE, NULL };
static const char *const s_plain[] = {
    "make the innermost loop walk contiguous memory in SIMD lanes, by the loop order that "
    "reads both operands along their rows: i-k-j, each @A[i][k] broadcast against the "
    "vectors of @B's row k (@B is [K][N], contiguous along j, not along k), a tile of the "
    "output kept in vector registers over k (over k the tile steps down @B's rows, N floats "
    "apart, @S)",
    "use each loaded value several times from registers, by a register-blocked FMA "
    "micro-kernel inside cache blocks, over panels packed in the order it reads them: @A's "
    "rows interleaved so @A[i0..i0+MR][k] is contiguous for each k, @B's rows copied in "
    "strips of NR columns (blocking, packing and micro-kernel as one change)",
    S_THREADS, S_BLOCKS,
    //  Round 20: this packed @A, whose MR rows the micro-kernel reads as
    //  MR contiguous streams; the strided walk is @B's, down its rows.
    "read each cache block as one contiguous stream, by packing blocks of @B, the operand "
    "the register tile walks down (@B[k][j0..j0+NR] and @B[k+1][j0..j0+NR] lie N floats "
    "apart), into panels of NR columns stored k after k, inside the cache blocks",
    S_EPILOGUE, NULL };

//  The bytes between two rows of the plain product's @B ([K][N]), or 0
//  where the product is not known.
static long long
s_b_stride (json_t *spec)
{
    long long mnk[3] = { 0, 0, 0 }, k;
    double elem;
    if (!s_k (spec, &k, &elem) || !(kf_prompt_matmul_flops (spec, mnk) > 0))
        return 0;
    return (long long) (mnk[1] * elem);
}

//  Round 23: a k block of 128 rows 2 KiB apart walked 64 pages, the
//  first-level data TLB of the helper's Zen 3 and of many x86 cores,
//  and its best product kernel came from a block of 64 rows; no prompt
//  said how many pages a block touches. The clause for rows STRIDE bytes
//  apart against ENTRIES pages: the 64 commonly held where ENTRIES is 0
//  (the idea lists know no host), else the host's measured count
//  (kf_prompt_idea_on_host). Caller frees.
static char *
s_tlb_clause (long long stride, long long entries)
{
    long long n = entries > 0 ? entries : 64;
    long long rows = stride >= 4096 ? n : n * 4096 / (stride > 0 ? stride : 1);
    if (entries > 0)
        return kf_strdupf ("; and a k block of more than %lld rows walks more 4 KiB pages than "
                           "the %lld entries this host's first-level data TLB holds, measured",
                           rows, n);
    return kf_strdupf ("; and a k block of more than %lld rows walks more 4 KiB pages than the "
                       "64 entries a first-level data TLB commonly holds for them (this host's "
                       "count is not measured)", rows);
}

//  Round 22: "those rows fall in one L1 set" of a [768][640] operand,
//  whose rows 2560 bytes apart spread over 8 of an L1's 64 sets (a 32
//  KiB, 8-way L1 of 64-byte lines: S_L1_ASSUMED); the model nearly gave
//  up blocking k on it. What a strip of @B's rows keeps in L1, from its
//  stride: one set for rows 4 KiB apart, else the sets the stride
//  reaches.
//  The L1 sets (of S_L1_ASSUMED's 64) rows STRIDE bytes apart fall in.
static long long
s_sets (long long stride)
{
    long long sets = 64;
    if (stride % 64 == 0) {
        long long a = (stride / 64) % sets, b = sets;
        while (a) {    //  gcd
            long long t = b % a;
            b = a;
            a = t;
        }
        sets = 64 / b;
    }
    return sets;
}

long long
kf_prompt_strip_rows_l1 (json_t *spec, long long *stride)
{
    *stride = s_b_stride (spec);
    return *stride ? s_sets (*stride) * 8 : 0;
}

static char *
s_strip_sets (json_t *spec)
{
    long long stride = s_b_stride (spec), ways = 8;
    if (!stride)
        return strdup ("so a strip over all of k comes from L2 unless k is blocked");
    long long sets = s_sets (stride);
    char *pages = s_tlb_clause (stride, 0);
    char *text = !pages ? NULL
                 : sets == 1
                     ? kf_strdupf ("%lld bytes, a multiple of 4 KiB: those rows fall in one L1 "
                                   "set, so at most %lld of them stay in L1 at once and the "
                                   "strip comes from L2%s", stride, ways, pages)
                     : kf_strdupf ("%lld bytes: those rows spread over %s%lld of a 32 KiB 8-way "
                                   "L1's 64 sets, so about %lld of them stay in L1 at once: a k "
                                   "block of no more rows keeps the strip there%s", stride,
                                   stride % 64 ? "about " : "", sets, sets * ways, pages);
    free (pages);
    return text;
}

char *
kf_prompt_idea_on_host (const char *idea, json_t *spec, json_t *device)
{
    if (!idea)
        return NULL;
    //  The list's text stays the key an idea's tries are matched by
    //  (kf_search_idea.h): only the attempt's reading of it names the
    //  host's count, where the exec worker measured one.
    long long stride = s_b_stride (spec);
    double entries = kf_jnum (device, "dtlb_l1_pages", 0);
    char *common = stride && entries >= 1 ? s_tlb_clause (stride, 0) : NULL;
    const char *at = common ? strstr (idea, common) : NULL;
    char *measured = at ? s_tlb_clause (stride, (long long) entries) : NULL;
    char *text = measured ? kf_strdupf ("%.*s%s%s", (int) (at - idea), idea, measured,
                                        at + strlen (common))
                          : strdup (idea);
    free (common);
    free (measured);
    //  Round 39-40: the approximation idea spoke of a log's or exp's
    //  range reduction alone for sin(2x) / (1 + x^2); round 43: of a
    //  log's, frexpf and sqrtf for sigmoid and tanh.
    char *own = kf_prompt_approx_on_host (text, spec);
    if (own) {
        free (text);
        text = own;
    }
    //  Round 48: "cache blocking over the rows of both and over k" beside
    //  the Block sizes line's "one pass over all of K ... is the simpler
    //  start" (K = 384).
    const char *over_k = " and over k";
    at = strstr (text, over_k);
    if (at && !at[strlen (over_k)] && kf_prompt_k_one_pass (spec, device)) {
        char *one = kf_strdupf ("%.*s, with k in one pass (the Block sizes line: a whole K x NR "
                                "panel of the second operand stays in L2 here, and blocking k "
                                "would store partial sums between blocks)",
                                (int) (at - text), text);
        free (text);
        text = one;
    }
    return text;
}

//  Round 41: x @ x.t() had the ideas of any x @ W^T, none about the half
//  of its multiply-adds that symmetry saves.
#define S_SELF                                                                               \
    "do half the multiply-adds, by computing only the diagonal and one triangle of the "     \
    "symmetric product (@A times its own transpose: out[i][j] = out[j][i]), each tile off "  \
    "the diagonal stored twice, itself and its mirror transposed"

const char *const *
kf_prompt_layout_ideas (json_t *spec, size_t *count)
{
    kf_product_t p;
    kf_product_layout_t kind = kf_prompt_product_read (spec, &p);
    //  The symmetric product's idea first, then those of any x @ W^T.
    const char *self[sizeof s_rows_k / sizeof s_rows_k[0] + 1] = { S_SELF };
    if (kf_prompt_product_is_self (kind, &p))
        memcpy (self + 1, s_rows_k, sizeof s_rows_k);
    const char *const *list = self[1] ? self
                              : kind == KF_PRODUCT_LINEAR || kind == KF_PRODUCT_TRANSPOSED
                              ? s_rows_k
                              : kind == KF_PRODUCT_FIRST_TRANSPOSED ? s_first_t
                              : kind == KF_PRODUCT_BOTH_TRANSPOSED ? s_both_t
                              : kind == KF_PRODUCT_PLAIN ? s_plain : NULL;
    if (!list)
        return NULL;
    //  Round 52: a chain's ideas said in1 (64 floats wide) where in2 is
    //  the operand the output's tile walks down: they name the product
    //  that makes the output, tmp @ in2 (the Target section says tmp).
    bool chain = kf_prompt_chain_flops (spec, NULL) > 0;
    const char *a = chain ? "tmp" : kind == KF_PRODUCT_LINEAR ? "x"
                    : *p.a ? kf_prompt_product_input (spec, p.a) : "A";
    const char *b = chain ? "in2" : kind == KF_PRODUCT_LINEAR ? "W"
                    : kf_prompt_product_input (spec, p.b);
    char *texts[8];
    size_t n = 0;
    for (; list[n] && n < sizeof texts / sizeof texts[0]; n++) {
        //  Round 16: the epilogue the task holds (a softmax, not "bias,
        //  activation"); no blocking over a short k.
        //  Round 24: and threads over column blocks where the epilogue
        //  reduces over each column's rows.
        char *own = !strcmp (list[n], S_EPILOGUE) ? kf_prompt_epilogue_idea (spec)
                    : !strcmp (list[n], S_THREADS) ? kf_prompt_epilogue_threads_idea (spec, a, b)
                    : !strcmp (list[n], S_BLOCKS) || !strcmp (list[n], s_rows_k[1])
                        ? kf_prompt_short_k_block (spec, a, b, !strcmp (list[n], s_rows_k[1]))
                        : NULL;
        if (!own && self[1] && !strcmp (list[n], S_THREADS))
            own = s_fill (S_THREADS_SELF, a, b);
        //  Round 42: "keep the rows of in0 and in0" of x @ x.t().
        if (!own && self[1])
            own = s_fill_self (list[n], a);
        texts[n] = own ? own : s_fill (list[n], a, b);
        char *at = texts[n] ? strstr (texts[n], "@S") : NULL;
        char *sets = at ? s_strip_sets (spec) : NULL;
        if (sets) {
            char *whole = kf_strdupf ("%.*s%s%s", (int) (at - texts[n]), texts[n], sets, at + 2);
            if (whole) {
                free (texts[n]);
                texts[n] = whole;
            }
        }
        free (sets);
    }
    const char *const *kept = kf_prompt_ideas_kept (texts, n);
    if (kept && count)
        *count = n;
    return kept;
}
