/*  kf_prompt_layout.h - whether a matrix product of a PyTorch reference
 *  reads both operands along the reduction dimension as they are stored.
 *
 *  nn.Linear's weight is [out][in], and in torch.matmul(a, b.T) b is
 *  [N][K]: each output is a dot product of two rows contiguous along k.
 *  A host kernel of such a product needs no transpose or packing for unit
 *  stride; in a.T @ b, a [K][M], each k's row holds the output rows'
 *  values contiguously, the layout of the outer-product order. The
 *  prompt says so (the Data section's layout note, the
 *  strategies and ideas of kf_prompt_class.c).
 */
#ifndef KF_PROMPT_LAYOUT_H
#define KF_PROMPT_LAYOUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum {
    KF_PRODUCT_OTHER,       /* no product, or one this reader does not follow */
    KF_PRODUCT_LINEAR,      /* nn.Linear or F.linear */
    KF_PRODUCT_TRANSPOSED,  /* every product is x @ w^T, w stored [N][K] */
    KF_PRODUCT_FIRST_TRANSPOSED,    /* every product is a^T @ b, a [K][M], b [K][N] */
    KF_PRODUCT_BOTH_TRANSPOSED,     /* every product is a^T @ b^T, a [K][M], b [N][K] */
    KF_PRODUCT_PLAIN        /* every product is a @ b, b stored [K][N] */
} kf_product_layout_t;

/* A product's layout and its operands as the code names them ("a",
 * "self.weight"; "" where not read: a first operand that is an
 * expression). */
typedef struct {
    kf_product_layout_t kind;
    char a[64], b[64];
    /* Round 38: the second product's second operand where it has the
     * first's first operand and another second ((a @ w) * sigmoid(a @ v):
     * "v"); "" otherwise. */
    char b2[64];
} kf_product_t;

/* How SPEC's reference code (comments and strings left out) multiplies:
 * KF_PRODUCT_LINEAR where it uses nn.Linear or F.linear; else, where it
 * has at least one matrix product (@, matmul, mm, bmm, addmm, baddbmm)
 * and every one has the same layout, that layout: which of its operands
 * is a tensor used transposed (w.T, w.t(), w.mT, w.transpose of its last
 * two dimensions), the first only where it is read as a name; else
 * KF_PRODUCT_OTHER. PRODUCT (when not NULL) gets the kind and the first
 * product's operands. */
kf_product_layout_t kf_prompt_product_read (json_t *spec, kf_product_t *product);

/* The same kind; OPERAND (SIZE bytes, when not NULL) gets the operand
 * used transposed as the code names it: the second for
 * KF_PRODUCT_TRANSPOSED and KF_PRODUCT_BOTH_TRANSPOSED, the first for
 * KF_PRODUCT_FIRST_TRANSPOSED, else "". */
kf_product_layout_t kf_prompt_product_layout (json_t *spec, char *operand, size_t size);

/* The task's in[] name ("in1") of the tensor SPEC's forward calls NAME
 * (borrowed from SPEC), or NAME itself where it is none of them. */
const char *kf_prompt_product_input (json_t *spec, const char *name);

/* Writes to F the operand the code calls NAME as the task names it:
 * "in0 (a in its code)", or NAME alone where the two are one. */
void kf_prompt_product_name (FILE *f, json_t *spec, const char *name);

/* Whether SPEC's products are x @ x^T of one operand (x @ x.t(),
 * torch.matmul(x, x.T)): a symmetric product, whose diagonal and one
 * triangle give all of it. */
bool kf_prompt_product_self (json_t *spec);

/* The same of a product already read as KIND with operands P. */
bool kf_prompt_product_is_self (kf_product_layout_t kind, const kf_product_t *p);

/* Writes to F the Data section's note on the product's layout where
 * kf_prompt_product_read says an operand is used transposed or a linear
 * layer: which operand is stored how (its in[] name, shape and name in
 * the code) and which loop order reads both along their rows. */
void kf_prompt_layout_note (FILE *f, json_t *spec);

/* The rest is kf_prompt_layout_ideas.c. */

/* The host ideas for SPEC's product that follow its layout (see the
 * ideas of kf_prompt_class.h), naming its operands by their in[] names
 * ("x" and "W" of a linear layer): NULL-ended, kept for the process's
 * life, *COUNT of them; NULL where the layout is not known
 * (KF_PRODUCT_OTHER). */
const char *const *kf_prompt_layout_ideas (json_t *spec, size_t *count);

/* Round 24: how many rows of the plain product's @B ([K][N], read in
 * place, *STRIDE bytes apart) a 32 KiB 8-way L1 holds at once (8 times
 * the sets they fall in), or 0 (*STRIDE 0) where SPEC is no such product:
 * the bound on an unpacked strip's k block, beside the packed KC. */
long long kf_prompt_strip_rows_l1 (json_t *spec, long long *stride);

/* IDEA as an attempt on DEVICE (an exec worker's device object, may be
 * NULL) reads it: where IDEA holds the plain product's clause on how many
 * rows of SPEC's @B a k block may take against the 64 entries a
 * first-level data TLB commonly holds, and DEVICE has "dtlb_l1_pages",
 * the clause with that measured count and the rows from it; else IDEA as
 * it is. The idea lists themselves know no host, so an idea's text stays
 * the key its tries are matched by. Caller frees; NULL without memory. */
char *kf_prompt_idea_on_host (const char *idea, json_t *spec, json_t *device);

/* Round 16: the cache-blocking idea for SPEC's product where K is short
 * (a 32 x 32 tile's rows of both operands over all of k within half of a
 * 32 KiB L1): blocking over the rows of both operands A and B (ROWS) or
 * over the output's rows and columns, not over k, with the figures;
 * caller frees. NULL where K is longer or not known. */
char *kf_prompt_short_k_block (json_t *spec, const char *a, const char *b, bool rows);

/* Writes the Target section's line on one product's working set (each
 * operand's and the output's bytes) against host device D's L1d and L2,
 * and whether blocking over k can pay; nothing where the shapes or the
 * caches are not known. */
void kf_prompt_working_set_line (FILE *f, json_t *spec, json_t *d);

#endif
