/*  kf_descriptor_host.h - host (C) evidence that a pattern alone cannot
 *  give, read by code for kf_descriptor.c.
 *
 *  Three questions a table row cannot answer:
 *  - is there a plain loop the compiler vectorises by itself (the host
 *    build is -O3 with the machine's SIMD flags), so the kernel is SIMD
 *    without one intrinsic in its text;
 *  - are the atomics a lone work counter handing out blocks (dynamic work
 *    distribution) or synchronisation on shared data;
 *  - is an operand copied into a local contiguous buffer (packing);
 *  - does a loop step over blocks of a constant size and run a loop nest
 *    inside each block, its own or in the functions it calls (cache
 *    blocking, whatever the constant is called), or by a block size's
 *    name; neither where the loop runs once, its step no smaller than its
 *    bound (round 35: KB = K = 512);
 *  - does a lock guard only a claimed work index (`blk = s->next++`), which
 *    is dynamic scheduling like the atomic counter, or shared results.
 *  kf_descriptor_host.c says how each is read.
 */
#ifndef KF_DESCRIPTOR_HOST_H
#define KF_DESCRIPTOR_HOST_H

#include <stdbool.h>
#include <stddef.h>

#define KF_HOST_SNIP 48

typedef struct {
    int autovec;                  /* unit-stride loops GCC -O3 vectorises */
    int counter;                  /* atomic fetch-adds of a constant to a plain counter */
    int shared_atomic;            /* any other atomic operation (or _Atomic used by operators) */
    int packing;                  /* element copies into a local buffer */
    int blocking;                 /* loops over blocks of a constant size around a loop nest */
    int named_block;              /* loops stepping by a block size by its name (KB, TILE) */
    int lock_claim;               /* locks that only guard a claimed work index (next++) */
    int lock;                     /* any other lock taken */
    char autovec_snip[KF_HOST_SNIP];
    char counter_snip[KF_HOST_SNIP];
    char shared_snip[KF_HOST_SNIP];
    char packing_snip[KF_HOST_SNIP];
    char blocking_snip[KF_HOST_SNIP];
    char named_snip[KF_HOST_SNIP];
    char lock_snip[KF_HOST_SNIP];
} kf_host_evidence_t;

/* Reads CODE (a host C source with comments and strings blanked) and fills
 * EV. Returns 0, -1 when its patterns cannot be compiled. */
int kf_descriptor_host (const char *code, kf_host_evidence_t *ev);

#endif
