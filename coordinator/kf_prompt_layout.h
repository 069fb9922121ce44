/*  kf_prompt_layout.h - whether a matrix product of a PyTorch reference
 *  reads both operands along the reduction dimension as they are stored.
 *
 *  nn.Linear's weight is [out][in], and in torch.matmul(a, b.T) b is
 *  [N][K]: each output is a dot product of two rows contiguous along k.
 *  A host kernel of such a product needs no transpose or packing for unit
 *  stride, and the prompt says so (the Data section's layout note, the
 *  strategies and ideas of kf_prompt_class.c).
 */
#ifndef KF_PROMPT_LAYOUT_H
#define KF_PROMPT_LAYOUT_H

#include <jansson.h>
#include <stdio.h>

typedef enum {
    KF_PRODUCT_OTHER,       /* no product, or one this reader does not follow */
    KF_PRODUCT_LINEAR,      /* nn.Linear or F.linear */
    KF_PRODUCT_TRANSPOSED   /* every product is x @ w^T, w stored [N][K] */
} kf_product_layout_t;

/* How SPEC's reference code (comments and strings left out) multiplies:
 * KF_PRODUCT_LINEAR where it uses nn.Linear or F.linear;
 * KF_PRODUCT_TRANSPOSED where it has at least one matrix product (@,
 * matmul, mm, bmm, addmm, baddbmm) and in each the second operand is a
 * tensor used transposed (w.T, w.t(), w.mT, w.transpose of its last two
 * dimensions) and the first is not. Then OPERAND (SIZE bytes, when not
 * NULL) gets the second operand's name as the code writes it ("b",
 * "self.weight"). */
kf_product_layout_t kf_prompt_product_layout (json_t *spec, char *operand, size_t size);

/* Writes to F the Data section's note on the product's layout where
 * kf_prompt_product_layout is not KF_PRODUCT_OTHER: which operand is
 * stored [N][K] (its in[] name, shape and name in the code) and that both
 * are read along k as stored. */
void kf_prompt_layout_note (FILE *f, json_t *spec);

#endif
