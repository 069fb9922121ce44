/*  kf_host_vec.c - the cycles one core's widest f32 vector divide, square
 *  root, reciprocal estimate and FMA take, and other vector instructions
 *  alone and beside FMAs (kf_host_vec.h).
 *
 *  Each instruction is timed two ways. Throughput: many instructions
 *  that depend on nothing but two constant registers (an FMA on its own
 *  register, sixteen or ten chains: more than latency times pipes), so
 *  the unit's issue rate bounds the loop. Latency: one chain, each
 *  instruction taking the one before as input. The time per instruction
 *  becomes cycles against a chain of dependent integer adds, one a cycle
 *  (as kf_host_measure.c's clock), timed just before it: the clock
 *  measured a moment earlier, beside other work, was 2% off a busy
 *  host's (an FMA's latency of 4 read 3.92).
 *
 *  Operands keep away from the values a divider or square root could
 *  finish early on: the divide chain is x = 2 / x from 1.3 (1.3, 1.54,
 *  1.3, ...), the reciprocal chain x = rcp (x) likewise; a square root
 *  chain of its own would fall to 1.0 within 25 steps, so its chain is
 *  x = sqrt (x) then x = x * x + 0 (an FMA), and the FMA's own latency,
 *  measured beside it, is taken off.
 *
 *  In assembly, each value in its own register, for the reason
 *  kf_host_measure.c's FMA loops are: a C compiler at -O1 kept such
 *  arrays in memory. Never instrumented.
 */
#include "kf_host_vec.h"
#include "kf_clock.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define S_MEASURED __attribute__ ((no_sanitize ("address", "undefined"), noinline))

//  A run is at least S_RUN_S: long beside the clock's reading (tens of
//  nanoseconds), short beside a scheduler's slice, so most runs are not
//  interrupted even on a busy host. Each instruction is timed in S_PAIRS
//  pairs of runs, the add chain then the instruction, so the two runs of
//  a pair see one clock: a host's clock moved by 8% within milliseconds
//  (each instruction's best run set against the add chain's best read a
//  divide's latency as 9.26 cycles beside an FMA's 4.02). Nor is every
//  pair fit to count: on a virtual machine whose other CPU was busy, the
//  FMA's throughput read 0.85 cycles in most pairs (presumably a physical
//  core's units shared with a CPU the guest sees as separate), and in
//  others the add chain ran 2-4% slow; s_cycles keeps the pairs where
//  both runs were near their fastest.
#define S_RUN_S 10e-6
#define S_PAIRS 21
#define S_WARM_S 10e-3
//  Readings of an op with a floor before the floor stands for it.
#define S_TRIES 3

typedef void (*s_loop_fn) (long n, const float *c);

//  The constants, broadcast to the top registers: the chains' start, the
//  divide chain's numerator, zero, the independent instructions' source,
//  and the FMA's multiplier and addend (x * 0.999999 + 1e-7 stays near
//  0.1 from 1.3, never denormal).
//  Loads read the first 64 bytes, the addend of the FMA with a memory
//  operand its first vector (1.3 and the rest: x * 0.999999 + m stays
//  finite).
static const float s_const[16] __attribute__ ((aligned (64)))
    = { 1.3f, 2.0f, 0.0f, 1.7f, 0.999999f, 1e-7f };

#if defined(__x86_64__)
#define S_R10(m) m (0) m (1) m (2) m (3) m (4) m (5) m (6) m (7) m (8) m (9)
#define S_R16(m) S_R10 (m) m (10) m (11) m (12) m (13) m (14) m (15)
#define S_ADD(r) "add %[one], %[x]\n\t"

//  AVX-512: zmm26-31 hold the constants, zmm0-15 the results.
#define S_SET512                                                                                \
    "vbroadcastss 0(%[c]), %%zmm26\n\tvbroadcastss 4(%[c]), %%zmm27\n\t"                        \
    "vbroadcastss 8(%[c]), %%zmm28\n\tvbroadcastss 12(%[c]), %%zmm29\n\t"                       \
    "vbroadcastss 16(%[c]), %%zmm30\n\tvbroadcastss 20(%[c]), %%zmm31\n\t" S_R16 (S_INIT512)
#define S_INIT512(r) "vmovaps %%zmm26, %%zmm" #r "\n\t"
#define S_DIV512(r) "vdivps %%zmm26, %%zmm29, %%zmm" #r "\n\t"
#define S_SQRT512(r) "vsqrtps %%zmm29, %%zmm" #r "\n\t"
#define S_RCP512(r) "vrcp14ps %%zmm29, %%zmm" #r "\n\t"
#define S_FMA512(r) "vfmadd213ps %%zmm31, %%zmm30, %%zmm" #r "\n\t"
#define S_DIV512_LAT(r) "vdivps %%zmm0, %%zmm27, %%zmm0\n\t"
#define S_SQRT512_LAT(r) "vsqrtps %%zmm0, %%zmm0\n\tvfmadd213ps %%zmm28, %%zmm0, %%zmm0\n\t"
#define S_RCP512_LAT(r) "vrcp14ps %%zmm0, %%zmm0\n\t"
#define S_FMA512_LAT(r) "vfmadd213ps %%zmm31, %%zmm30, %%zmm0\n\t"
#define S_RSQRT512(r) "vrsqrt14ps %%zmm29, %%zmm" #r "\n\t"
#define S_RSQRT512_LAT(r) "vrsqrt14ps %%zmm0, %%zmm0\n\t"
#define S_LOAD512(r) "vmovups 0(%[c]), %%zmm" #r "\n\t"
#define S_BCAST512(r) "vbroadcastss 4(%[c]), %%zmm" #r "\n\t"
#define S_FMAMEM512(r) "vfmadd213ps 20(%[c])%{1to16%}, %%zmm30, %%zmm" #r "\n\t"
//  A divide and a square root in turn (their throughput together).
#define S_DIVSQRT512(r) "vdivps %%zmm26, %%zmm29, %%zmm" #r "\n\tvsqrtps %%zmm29, %%zmm" #r "\n\t"
#define S_LOOP512(name, m)                                                                      \
    __attribute__ ((target ("avx512f"))) S_MEASURED static void name (long n, const float *c)   \
    {                                                                                           \
        __asm__ volatile (S_SET512 "1:\n\t" S_R16 (m) "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"    \
                          : [n] "+r"(n)                                                         \
                          : [c] "r"(c)                                                          \
                          : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
                            "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",        \
                            "xmm15", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",      \
                            "cc", "memory");                                                    \
    }

//  AVX2 and FMA: ymm10-15 hold the constants, ymm0-9 the results.
#define S_SET256                                                                                \
    "vbroadcastss 0(%[c]), %%ymm10\n\tvbroadcastss 4(%[c]), %%ymm11\n\t"                        \
    "vbroadcastss 8(%[c]), %%ymm12\n\tvbroadcastss 12(%[c]), %%ymm13\n\t"                       \
    "vbroadcastss 16(%[c]), %%ymm14\n\tvbroadcastss 20(%[c]), %%ymm15\n\t" S_R10 (S_INIT256)
#define S_INIT256(r) "vmovaps %%ymm10, %%ymm" #r "\n\t"
#define S_DIV256(r) "vdivps %%ymm10, %%ymm13, %%ymm" #r "\n\t"
#define S_SQRT256(r) "vsqrtps %%ymm13, %%ymm" #r "\n\t"
#define S_RCP256(r) "vrcpps %%ymm13, %%ymm" #r "\n\t"
#define S_FMA256(r) "vfmadd213ps %%ymm15, %%ymm14, %%ymm" #r "\n\t"
#define S_DIV256_LAT(r) "vdivps %%ymm0, %%ymm11, %%ymm0\n\t"
#define S_SQRT256_LAT(r) "vsqrtps %%ymm0, %%ymm0\n\tvfmadd213ps %%ymm12, %%ymm0, %%ymm0\n\t"
#define S_RCP256_LAT(r) "vrcpps %%ymm0, %%ymm0\n\t"
#define S_FMA256_LAT(r) "vfmadd213ps %%ymm15, %%ymm14, %%ymm0\n\t"
#define S_RSQRT256(r) "vrsqrtps %%ymm13, %%ymm" #r "\n\t"
#define S_RSQRT256_LAT(r) "vrsqrtps %%ymm0, %%ymm0\n\t"
#define S_LOAD256(r) "vmovups 0(%[c]), %%ymm" #r "\n\t"
#define S_BCAST256(r) "vbroadcastss 4(%[c]), %%ymm" #r "\n\t"
#define S_FMAMEM256(r) "vfmadd213ps 0(%[c]), %%ymm14, %%ymm" #r "\n\t"
#define S_DIVSQRT256(r) "vdivps %%ymm10, %%ymm13, %%ymm" #r "\n\tvsqrtps %%ymm13, %%ymm" #r "\n\t"
#define S_LOOP256(name, m)                                                                      \
    __attribute__ ((target ("avx2,fma"))) S_MEASURED static void name (long n, const float *c)  \
    {                                                                                           \
        __asm__ volatile (S_SET256 "1:\n\t" S_R10 (m) "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"    \
                          : [n] "+r"(n)                                                         \
                          : [c] "r"(c)                                                          \
                          : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
                            "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",        \
                            "xmm15", "cc", "memory");                                           \
    }

//  Instructions a kernel mixes with its FMAs, each on its own (into the
//  result registers, from constants) and in a mix: two FMAs (each on a
//  chain of its own, as S_FMA) then the instruction, its result into a
//  register nothing reads, so the mix has the FMAs' chains and nothing
//  more. Two FMAs to one: with one to one, an instruction that runs on
//  only one of the FMAs' two pipes and the FMAs' alone take the same
//  time as one on a pipe of its own (Intel's 512-bit shuffles on port 5,
//  where its second FMA unit is: each 1 a cycle), and two to one tells
//  them apart (1.5 FMA times against 1). AVX-512 has no vblendvps nor
//  (without AVX512DQ) vandps: vblendmps with a mask, vpandd.
#define S_PERM512(r) "vpermps %%zmm29, %%zmm27, %%zmm" #r "\n\t"
#define S_SHUF512(r) "vshufps $0x1b, %%zmm27, %%zmm29, %%zmm" #r "\n\t"
#define S_BLEND512(r) "vblendmps %%zmm27, %%zmm29, %%zmm" #r "%{%%k1%}\n\t"
#define S_AND512(r) "vpandd %%zmm27, %%zmm29, %%zmm" #r "\n\t"
#define S_CMP512(r) "vcmpps $1, %%zmm27, %%zmm29, %%k2\n\t"
#define S_CVT512(r) "vcvtps2dq %%zmm29, %%zmm" #r "\n\t"
#define S_IADD512(r) "vpaddd %%zmm27, %%zmm29, %%zmm" #r "\n\t"
//  Round 21 (a log1p and sigmoid kernel of some 40 mixed ops a vector;
//  a GEMM's horizontal sums): vrndscaleps (AVX-512's vroundps) and
//  vroundps to the floor, a shift by an immediate (vpslld: exp's 2^n),
//  vmaxps (vminps on the same units on every x86 core), vcvtdq2ps, and
//  vhaddps, which has no 512-bit form: not measured there.
#define S_ROUND512(r) "vrndscaleps $9, %%zmm29, %%zmm" #r "\n\t"
#define S_SHIFT512(r) "vpslld $23, %%zmm29, %%zmm" #r "\n\t"
#define S_MAX512(r) "vmaxps %%zmm27, %%zmm29, %%zmm" #r "\n\t"
#define S_CVTF512(r) "vcvtdq2ps %%zmm29, %%zmm" #r "\n\t"
#define S_MIX512(x)                                                                             \
    S_FMA512 (0) S_FMA512 (1) x (16) S_FMA512 (2) S_FMA512 (3) x (16) S_FMA512 (4)              \
    S_FMA512 (5) x (16) S_FMA512 (6) S_FMA512 (7) x (16) S_FMA512 (8) S_FMA512 (9) x (16)       \
    S_FMA512 (10) S_FMA512 (11) x (16) S_FMA512 (12) S_FMA512 (13) x (16) S_FMA512 (14)         \
    S_FMA512 (15) x (16)
#define S_XLOOP512(name, body)                                                                  \
    __attribute__ ((target ("avx512f"))) S_MEASURED static void name (long n, const float *c)   \
    {                                                                                           \
        __asm__ volatile (S_SET512 "kxnorw %%k1, %%k1, %%k1\n\t1:\n\t" body                     \
                          "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"                                \
                          : [n] "+r"(n)                                                         \
                          : [c] "r"(c)                                                          \
                          : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
                            "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",        \
                            "xmm15", "xmm16", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30",      \
                            "xmm31", "k1", "k2", "cc", "memory");                               \
    }
#define S_PERM256(r) "vpermps %%ymm13, %%ymm11, %%ymm" #r "\n\t"
#define S_SHUF256(r) "vshufps $0x1b, %%ymm11, %%ymm13, %%ymm" #r "\n\t"
#define S_BLEND256(r) "vblendvps %%ymm10, %%ymm11, %%ymm13, %%ymm" #r "\n\t"
#define S_AND256(r) "vandps %%ymm11, %%ymm13, %%ymm" #r "\n\t"
#define S_CMP256(r) "vcmpps $1, %%ymm11, %%ymm13, %%ymm" #r "\n\t"
#define S_CVT256(r) "vcvtps2dq %%ymm13, %%ymm" #r "\n\t"
#define S_IADD256(r) "vpaddd %%ymm11, %%ymm13, %%ymm" #r "\n\t"
#define S_ROUND256(r) "vroundps $9, %%ymm13, %%ymm" #r "\n\t"
#define S_SHIFT256(r) "vpslld $23, %%ymm13, %%ymm" #r "\n\t"
#define S_MAX256(r) "vmaxps %%ymm11, %%ymm13, %%ymm" #r "\n\t"
#define S_CVTF256(r) "vcvtdq2ps %%ymm13, %%ymm" #r "\n\t"
#define S_HADD256(r) "vhaddps %%ymm11, %%ymm13, %%ymm" #r "\n\t"
//  The mix's instruction writes ymm12, the zero no FMA of it reads.
#define S_MIX256(x)                                                                             \
    S_FMA256 (0) S_FMA256 (1) x (12) S_FMA256 (2) S_FMA256 (3) x (12) S_FMA256 (4)              \
    S_FMA256 (5) x (12) S_FMA256 (6) S_FMA256 (7) x (12) S_FMA256 (8) S_FMA256 (9) x (12)
//  vhaddps takes 2 cycles alone here, two FMAs one: a mix of two FMAs and
//  one took its 2.00 alone, as if beside them, while four FMAs and one
//  took 2.70 against their 2.00, 1.4 FMAs' time more. So its mix is four
//  FMAs to one, twenty FMAs (two on each chain) and five vhaddps a round.
#define S_MIX256_4(x)                                                                           \
    S_FMA256 (0) S_FMA256 (1) S_FMA256 (2) S_FMA256 (3) x (12) S_FMA256 (4) S_FMA256 (5)        \
    S_FMA256 (6) S_FMA256 (7) x (12) S_FMA256 (8) S_FMA256 (9) S_FMA256 (0) S_FMA256 (1)        \
    x (12) S_FMA256 (2) S_FMA256 (3) S_FMA256 (4) S_FMA256 (5) x (12) S_FMA256 (6)              \
    S_FMA256 (7) S_FMA256 (8) S_FMA256 (9) x (12)
#define S_XLOOP256(name, body)                                                                  \
    __attribute__ ((target ("avx2,fma"))) S_MEASURED static void name (long n, const float *c)  \
    {                                                                                           \
        __asm__ volatile (S_SET256 "1:\n\t" body "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"       \
                          : [n] "+r"(n)                                                         \
                          : [c] "r"(c)                                                          \
                          : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
                            "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",        \
                            "xmm15", "cc", "memory");                                           \
    }
//  Each instruction X: s_X512, s_X512_fma (the mix), s_X256, s_X256_fma.
#define S_XLOOPS(x, X)                                                                          \
    S_XLOOP512 (s_##x##512, S_R16 (S_##X##512))                                                 \
    S_XLOOP512 (s_##x##512_fma, S_MIX512 (S_##X##512))                                          \
    S_XLOOP256 (s_##x##256, S_R10 (S_##X##256))                                                 \
    S_XLOOP256 (s_##x##256_fma, S_MIX256 (S_##X##256))

S_XLOOPS (perm, PERM)
S_XLOOPS (shuf, SHUF)
S_XLOOPS (blend, BLEND)
S_XLOOPS (and, AND)
S_XLOOPS (cmp, CMP)
S_XLOOPS (cvt, CVT)
S_XLOOPS (iadd, IADD)
S_XLOOPS (round, ROUND)
S_XLOOPS (shift, SHIFT)
S_XLOOPS (max, MAX)
S_XLOOPS (cvtf, CVTF)
//  vhaddps: 256 bits alone (its 512-bit loops are NULL in the table).
S_XLOOP256 (s_hadd256, S_R10 (S_HADD256))
S_XLOOP256 (s_hadd256_fma, S_MIX256_4 (S_HADD256))
S_LOOP512 (s_rsqrt512, S_RSQRT512)
S_LOOP512 (s_rsqrt512_lat, S_RSQRT512_LAT)
S_LOOP512 (s_load512, S_LOAD512)
S_LOOP512 (s_bcast512, S_BCAST512)
S_LOOP512 (s_fmamem512, S_FMAMEM512)
S_LOOP512 (s_divsqrt512, S_DIVSQRT512)
S_LOOP256 (s_rsqrt256, S_RSQRT256)
S_LOOP256 (s_rsqrt256_lat, S_RSQRT256_LAT)
S_LOOP256 (s_load256, S_LOAD256)
S_LOOP256 (s_bcast256, S_BCAST256)
S_LOOP256 (s_fmamem256, S_FMAMEM256)
S_LOOP256 (s_divsqrt256, S_DIVSQRT256)
S_LOOP512 (s_div512, S_DIV512)
S_LOOP512 (s_sqrt512, S_SQRT512)
S_LOOP512 (s_rcp512, S_RCP512)
S_LOOP512 (s_fma512, S_FMA512)
S_LOOP512 (s_div512_lat, S_DIV512_LAT)
S_LOOP512 (s_sqrt512_lat, S_SQRT512_LAT)
S_LOOP512 (s_rcp512_lat, S_RCP512_LAT)
S_LOOP512 (s_fma512_lat, S_FMA512_LAT)
S_LOOP256 (s_div256, S_DIV256)
S_LOOP256 (s_sqrt256, S_SQRT256)
S_LOOP256 (s_rcp256, S_RCP256)
S_LOOP256 (s_fma256, S_FMA256)
S_LOOP256 (s_div256_lat, S_DIV256_LAT)
S_LOOP256 (s_sqrt256_lat, S_SQRT256_LAT)
S_LOOP256 (s_rcp256_lat, S_RCP256_LAT)
S_LOOP256 (s_fma256_lat, S_FMA256_LAT)

//  Dependent register adds, one a cycle: the clock the loops above
//  run at (a register operand: recent cores fold add-immediate chains).
S_MEASURED static void
s_adds (long n, const float *c)
{
    (void) c;
    unsigned long x = 0, one = 1;
    __asm__ volatile ("1:\n\t" S_R16 (S_ADD) "dec %[n]\n\tjnz 1b\n\t"
                      : [n] "+r"(n), [x] "+r"(x)
                      : [one] "r"(one)
                      : "cc");
}

//  The shortest of three runs of N rounds of FN, in seconds.
static double
s_run3 (s_loop_fn fn, long n)
{
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = kf_clock_now ();
        fn (n, s_const);
        double t = kf_clock_now () - t0;
        if (r == 0 || t < best)
            best = t;
    }
    return best;
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

//  The rounds of FN that take S_RUN_S: doubled until the shortest of
//  three runs does (one interrupted run does not stop the doubling early).
static long
s_rounds (s_loop_fn fn)
{
    long n = 16;
    while (s_run3 (fn, n) < S_RUN_S && n < (1L << 24))
        n *= 2;
    return n;
}

//  FN's time per instruction (PER_ROUND instructions a round) against
//  REF's (REF_N rounds of REF_PER instructions), from S_PAIRS pairs of
//  runs, REF just before FN: the median ratio over the pairs where both
//  runs came within 2% of their fastest (not cut, not slowed by a
//  neighbour, near the highest clock seen); where no pair did, the
//  lowest ratio of those whose REF run did. 0 when a run took no time.
static double
s_ratio (s_loop_fn fn, int per_round, s_loop_fn ref, long ref_n, int ref_per)
{
    long n = s_rounds (fn);
    double add[S_PAIRS], op[S_PAIRS], ratio[S_PAIRS], fast_add = 0, fast_op = 0, lowest = 0;
    for (int r = 0; r < S_PAIRS; r++) {
        double t0 = kf_clock_now ();
        ref (ref_n, s_const);
        double t1 = kf_clock_now ();
        fn (n, s_const);
        double t2 = kf_clock_now ();
        add[r] = (t1 - t0) / ((double) ref_n * ref_per);
        op[r] = (t2 - t1) / ((double) n * per_round);
        if (!(add[r] > 0 && op[r] > 0))
            return 0;
        fast_add = r == 0 || add[r] < fast_add ? add[r] : fast_add;
        fast_op = r == 0 || op[r] < fast_op ? op[r] : fast_op;
    }
    int kept = 0;
    for (int r = 0; r < S_PAIRS; r++) {
        if (add[r] > 1.02 * fast_add)
            continue;
        if (lowest == 0 || op[r] / add[r] < lowest)
            lowest = op[r] / add[r];
        if (op[r] <= 1.02 * fast_op)
            ratio[kept++] = op[r] / add[r];
    }
    qsort (ratio, (size_t) kept, sizeof ratio[0], s_cmp);
    return kept > 0 ? ratio[kept / 2] : lowest;
}

//  s_ratio's arguments, for kf_host_vec_floored.
typedef struct {
    s_loop_fn fn, ref;
    int per_round, ref_per;
    long ref_n;
} s_ratio_args_t;

static double
s_ratio_again (void *arg)
{
    const s_ratio_args_t *a = arg;
    return s_ratio (a->fn, a->per_round, a->ref, a->ref_n, a->ref_per);
}

//  Cycles per instruction of FN: against the add chain (ADDS rounds of
//  16 adds, one a cycle).
static double
s_cycles (s_loop_fn fn, int per_round, long adds)
{
    return s_ratio (fn, per_round, s_adds, adds, 16);
}

static void
s_set (json_t *device, const char *key, double cycles, int *added)
{
    if (!(cycles > 0) || !isfinite (cycles))
        return;
    json_object_set_new (device, key, json_real (round (cycles * 100) / 100));
    (*added)++;
}
#endif

double
kf_host_vec_floored (double (*measure) (void *), void *arg, double least, int tries)
{
    double ratio = 0;
    for (int t = 0; t < tries; t++) {
        ratio = measure (arg);
        if (!(ratio > 0) || ratio >= 0.95 * least)
            return ratio;
    }
    return ratio > 0 ? least : 0;
}

int
kf_host_vec_costs (json_t *device)
{
    int added = 0;
#if defined(__x86_64__)
    if (!json_is_object (device))
        return 0;
    //  Each op's throughput and latency loops for 512 and 256 bits (NULL:
    //  not measured), instructions a round over the round's registers (a
    //  divide and a square root per register for divsqrt; for an X's mix,
    //  one group of two FMAs and the X per two registers), and the op an
    //  op is told against (-1: none). Such an op's throughput is timed in
    //  pairs with its base's, not with the add chain's, and is the base's
    //  cycles times the ratio: a neighbour on the same physical core
    //  shares its vector units, not the add chain's, so an FMA timed
    //  alone at 0.83 cycles while its sibling was busy and with an
    //  operand from L1 at 0.68 once the sibling had stopped (CI, check
    //  of e8ed510), against 0.5 and 0.63 on a quiet core. Last, the
    //  fewest of its base's cycles such an op can take (0: no floor): an
    //  FMA with an operand from L1 one FMA's, a mix its FMAs'. A reading
    //  under it is measured again (kf_host_vec_floored): CI read a mix of
    //  two FMAs and vcvtps2dq at 1.78 FMAs' time, which no core does.
    static const struct {
        const char *op;
        s_loop_fn tput[2], lat[2];
        double per_register;
        int base;
        double least;
    } ops[] = {
        { "div", { s_div512, s_div256 }, { s_div512_lat, s_div256_lat }, 1, -1, 0 },
        { "sqrt", { s_sqrt512, s_sqrt256 }, { s_sqrt512_lat, s_sqrt256_lat }, 1, -1, 0 },
        { "rcp", { s_rcp512, s_rcp256 }, { s_rcp512_lat, s_rcp256_lat }, 1, -1, 0 },
        { "fma", { s_fma512, s_fma256 }, { s_fma512_lat, s_fma256_lat }, 1, -1, 0 },
        { "rsqrt", { s_rsqrt512, s_rsqrt256 }, { s_rsqrt512_lat, s_rsqrt256_lat }, 1, -1, 0 },
        { "load", { s_load512, s_load256 }, { NULL, NULL }, 1, -1, 0 },
        { "bcast", { s_bcast512, s_bcast256 }, { NULL, NULL }, 1, -1, 0 },
        { "fma_mem", { s_fmamem512, s_fmamem256 }, { NULL, NULL }, 1, 3, 1 },
        { "divsqrt", { s_divsqrt512, s_divsqrt256 }, { NULL, NULL }, 2, 0, 0 },
        //  Each X alone, then in its mix with FMAs.
#define S_X(x)                                                                                  \
    { #x, { s_##x##512, s_##x##256 }, { NULL, NULL }, 1, 3, 0 },                                \
        { #x "_with_fma", { s_##x##512_fma, s_##x##256_fma }, { NULL, NULL }, 0.5, 3, 2 },
        S_X (perm) S_X (shuf) S_X (blend) S_X (and) S_X (cmp) S_X (cvt) S_X (iadd)
        S_X (round) S_X (shift) S_X (max) S_X (cvtf)
        { "hadd", { NULL, s_hadd256 }, { NULL, NULL }, 1, 3, 0 },
        { "hadd_with_fma", { NULL, s_hadd256_fma }, { NULL, NULL }, 0.5, 3, 4 },
#undef S_X
    };
    __builtin_cpu_init ();
    bool has512 = __builtin_cpu_supports ("avx512f");
    if (!has512 && !(__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")))
        return 0;
    int w = has512 ? 0 : 1, registers = has512 ? 16 : 10;
    //  Wide units warmed first: measured after two idle seconds, an FMA
    //  read 0.58-0.74 cycles here, 0.50-0.54 with the same 10 ms of
    //  vector work just before (the upper lanes' power and the clock
    //  come up some milliseconds after vector work starts).
    long warm = s_rounds (ops[3].tput[w]);
    for (double t0 = kf_clock_now (); kf_clock_now () - t0 < S_WARM_S;)
        ops[3].tput[w] (warm, s_const);
    long adds = s_rounds (s_adds);
    json_object_set_new (device, "vec_lanes", json_integer (has512 ? 16 : 8));
    added++;
    double fma_lat = s_cycles (ops[3].lat[w], registers, adds);
    double tput[sizeof ops / sizeof ops[0]] = { 0 };
    long base_n[sizeof ops / sizeof ops[0]] = { 0 };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char key[64];
        snprintf (key, sizeof key, "vec_%s_cycles", ops[i].op);
        int per = (int) (registers * ops[i].per_register), b = ops[i].base;
        //  No form of this width (vhaddps at 512 bits): left out.
        if (!ops[i].tput[w])
            continue;
        if (b >= 0 && tput[b] > 0 && !base_n[b])
            base_n[b] = s_rounds (ops[b].tput[w]);
        if (b < 0)
            tput[i] = s_cycles (ops[i].tput[w], per, adds);
        else if (tput[b] > 0) {
            s_ratio_args_t a = { ops[i].tput[w], ops[b].tput[w], per,
                                 (int) (registers * ops[b].per_register), base_n[b] };
            tput[i] = tput[b] * kf_host_vec_floored (s_ratio_again, &a, ops[i].least, S_TRIES);
        }
        s_set (device, key, tput[i], &added);
        if (!ops[i].lat[w])
            continue;
        double lat = i == 3 ? fma_lat : s_cycles (ops[i].lat[w], registers, adds);
        //  The square root's chain is a root and an FMA a link.
        if (i == 1)
            lat = fma_lat > 0 ? lat - fma_lat : 0;
        snprintf (key, sizeof key, "vec_%s_latency_cycles", ops[i].op);
        s_set (device, key, lat, &added);
    }
#else
    (void) device;
#endif
    return added;
}
