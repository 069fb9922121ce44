/*  kf_kernel.h - the kernel contract.
 *
 *  Every candidate kernel and every native reference is one source file that
 *  exports kf_forward() with C linkage. This header is shown verbatim to the
 *  generator, so it is written to be read by a kernel author: it has no
 *  dependency beyond <stddef.h> and <stdint.h>, and compiles as C11, C++ and
 *  CUDA.
 */
#ifndef KF_KERNEL_H
#define KF_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KF_KERNEL_ABI_VERSION 1
#define KF_MAX_RANK 8

/* Element types. The numeric values are part of the ABI. */
typedef enum {
    KF_F32 = 0,
    KF_F64 = 1,
    KF_F16 = 2,
    KF_BF16 = 3,
    KF_I32 = 4,
    KF_I64 = 5
} kf_dtype_t;

/* Where the data pointers live and what ctx->stream is. */
typedef enum {
    KF_BACKEND_HOST = 0,        /* host memory; stream is NULL           */
    KF_BACKEND_CUDA = 1,        /* device memory; stream is cudaStream_t */
    KF_BACKEND_LEVEL_ZERO = 2   /* device memory; stream is a command list */
} kf_backend_t;

/* A dense tensor. Strides are in elements, not bytes; a contiguous
 * row-major tensor has strides[rank-1] == 1. */
typedef struct {
    void *data;
    int32_t dtype;                    /* kf_dtype_t */
    int32_t rank;
    int64_t shape[KF_MAX_RANK];
    int64_t strides[KF_MAX_RANK];
} kf_tensor_t;

/* Everything the kernel may use besides its tensors. */
typedef struct {
    int32_t backend;                  /* kf_backend_t */
    void *stream;                     /* backend queue, or NULL on host */
    int32_t n_scalars;                /* task scalars, in task order */
    const char *const *scalar_names;
    const double *scalars;
    /* Scratch memory on the kernel's backend, valid until kf_forward
     * returns. Returns NULL when the request cannot be met. */
    void *(*scratch_alloc)(void *scratch_state, size_t bytes);
    void *scratch_state;
} kf_ctx_t;

/* The entry point. Inputs are read-only; outputs are preallocated with the
 * task's output shapes and must be fully written. Returns 0 on success,
 * non-zero to report failure. */
int kf_forward(const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
               const kf_ctx_t *ctx);

/* Optional: why kf_forward refused. A kernel that returns non-zero because
 * it cannot take what it was given (a shape, a dtype, a rank it does not
 * handle) may also export kf_refusal(), returning one short line that
 * says why, e.g. "expects a square matrix, got 512 x 256" (a static
 * buffer the kernel wrote before returning is fine). It is called only
 * right after kf_forward returned non-zero; at most KF_REFUSAL_MAX bytes
 * are read, up to the first NUL or line break, and shown in the verdict.
 * A refusal is taken as final: the same inputs would be refused again. */
#define KF_REFUSAL_MAX 200
typedef const char *(kf_refusal_fn) (void);
const char *kf_refusal (void);

/* Returns the scalar named NAME, or FALLBACK when the task has none. */
static inline double
kf_scalar (const kf_ctx_t *ctx, const char *name, double fallback)
{
    for (int i = 0; i < ctx->n_scalars; i++) {
        const char *a = ctx->scalar_names[i];
        const char *b = name;
        while (*a && *a == *b) { a++; b++; }
        if (*a == 0 && *b == 0)
            return ctx->scalars[i];
    }
    return fallback;
}

/* Number of elements of T. */
static inline int64_t
kf_numel (const kf_tensor_t *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

#ifdef __cplusplus
}
#endif
#endif
