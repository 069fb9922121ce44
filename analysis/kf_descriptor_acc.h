/*  kf_descriptor_acc.h - the accumulators of a kernel and what they say of
 *  register blocking, unrolling and polynomial steps: one reading of the
 *  code for the descriptors (kf_descriptor.c) and for the planner's "does
 *  this kernel do it already" (coordinator/kf_prompt_does.c).
 *
 *  Round 7 of issue 15: a GEMM micro-kernel of named accumulators (c00 ...
 *  c13) stayed "in its parent's cell", because the descriptors knew only a
 *  two-dimensional array declaration as a register tile, while the
 *  planner's own reading of the same source already saw the micro-kernel.
 *  Both now read it here.
 */
#ifndef KF_DESCRIPTOR_ACC_H
#define KF_DESCRIPTOR_ACC_H

#include <stdbool.h>

#define KF_ACC_MAX 64
#define KF_ACC_NAME 48

typedef struct {
    char names[KF_ACC_MAX][KF_ACC_NAME];    /* distinct accumulators, white space removed */
    char ops[KF_ACC_MAX][2][KF_ACC_NAME];   /* the two factors of each one's multiply-add
                                               ("" when not a plain product) */
    unsigned char madd[KF_ACC_MAX];         /* each one updated by a multiply-add */
    int n;
    int same;                    /* the most of them that differ only by a number
                                    (acc0, acc1; s[0], s[1]): several of one kind */
    int fma;                     /* of them, updated by a multiply-add */
    int tile;                    /* of them, register-tile accumulators: a 2-D element
                                    (acc[r][c]) updated by a multiply-add, or one whose
                                    multiply-add shares a factor with another's (a value
                                    loaded once and used from a register several times) */
    int horner;                  /* steps p = p * t + c, p = fma (p, t, c) */
    char tile_snip[KF_ACC_NAME]; /* the first tile accumulator's update, for `why` */
} kf_descriptor_acc_t;

/* A register tile by this reading: four accumulators or more that reuse
 * each other's factors, or a 2-D accumulator array updated in a loop; an
 * element of a 1-D array of vectors indexed by a name (c0[r]) counts two,
 * its factors without the index shared by its elements. */
#define KF_ACC_TILE_MIN 4

/* Reads CODE (comments and strings already blanked, kf_descriptor_strip)
 * statement by statement into A. */
void kf_descriptor_accumulators (const char *code, kf_descriptor_acc_t *a);

/* Whether A holds a register tile (see KF_ACC_TILE_MIN). */
int kf_descriptor_acc_is_tile (const kf_descriptor_acc_t *a);

/* How many dimensions (1 or 2; 0: none) the local array NAME (an element
 * such as c0[r], or the bare name) is declared with in CODE; a parameter
 * or an array in shared memory is none. *VEC: whether its elements are
 * SIMD vectors (__m512, float32x4_t, float4). */
int kf_descriptor_acc_local_array (const char *code, const char *name, bool *vec);

#endif
