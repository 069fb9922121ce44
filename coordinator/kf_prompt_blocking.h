/*  kf_prompt_blocking.h - the register tile and cache blocks of an f32
 *  matrix product on the host, sized from its caches and vector width,
 *  for the Target section (kf_prompt_blocking.c).
 *
 *  A model in the loop (host target, AVX2 2-CPU VM) was handed the
 *  product's ideas, a micro-kernel of MR x NR outputs inside cache
 *  blocks (KC, MC), and no block size derived from this host's caches.
 */
#ifndef KF_PROMPT_BLOCKING_H
#define KF_PROMPT_BLOCKING_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
    int lanes;        /* f32 lanes of a vector: 8 (AVX2) or 16 (AVX-512) */
    int registers;    /* vector registers: 16 or 32 */
    int nr;           /* the tile's columns: 2 vectors */
    int mr;           /* its rows: MR x 2 accumulators, B's 2 vectors and
                       * A's broadcast fill the registers */
    long kc;          /* a KC x NR panel of B and an MR x KC sliver of A
                       * take at most half of the L1d; a multiple of 8 */
    long mc;          /* an MC x KC block of A takes at most half of the L2;
                       * a multiple of MR */
    long nc;          /* a KC x NC panel of B takes at most half of one
                       * core's share of the L3; a multiple of NR; 0 where
                       * that share is not known */
} kf_blocking_t;

/* Sizes the blocks of an f32 product, as kf_blocking_t says, for vectors
 * of LANES floats (8 or 16), an L1d of L1D bytes, an L2 of L2 bytes and
 * one core's share of the L3 of L3_SHARE bytes (0 or less: not known).
 * Pure. Returns 0 and fills *B; -1 for other lanes, an unknown L1d or
 * L2, or caches too small for one block of 8 (KC) or of MR (MC). */
int kf_prompt_blocking (int lanes, double l1d, double l2, double l3_share, kf_blocking_t *b);

/* Writes one line, for task SPEC when it is an f32 matrix product, of
 * host device D's block sizes (kf_prompt_blocking) for the widest vector
 * of ISA (the extensions kernels are compiled for; NULL or "": D's
 * "isa"), from D's "l1d_bytes", "l2_bytes" and "l3_bytes" over
 * "l3_shared_cpus" (an L3 larger than a real core's share,
 * KF_PROMPT_L3_PER_CPU_MAX a CPU, counts as not known); nothing
 * otherwise. */
void kf_prompt_blocking_line (FILE *f, json_t *spec, json_t *d, const char *isa);

/* Round 48: whether the Block sizes line (kf_prompt_blocking_line) of
 * task SPEC on host device D says a whole K x NR panel of B stays in the
 * L2, so one pass over all of K is the simpler start: K is more than one
 * KC block and the panel takes at most half the L2. */
bool kf_prompt_k_one_pass (json_t *spec, json_t *d);

#endif
