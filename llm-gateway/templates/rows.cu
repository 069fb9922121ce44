/* Rows for softmax and the norms. ROW=block gives a row to each block,
 * ROW=warp a row to each warp (BLOCK / 32 rows a block), for short rows.
 * HOLD is how many floats of its row a thread may keep in registers: a
 * row that fits is read from memory once and written once, with all of a
 * thread's loads issued before the first is used; a longer row, or one
 * whose length or pointers do not allow VEC-wide access, takes the loops
 * that read it again from the caches. STREAM=1 reads the rows and writes
 * the results with the streaming hints (ld.global.cs / st.global.cs), so
 * neither stays in L2 at the expense of the other. */
#define KF_block 0
#define KF_warp 1
#define KF_ROW KF_CAT (KF_, ROW)
#if KF_ROW == KF_warp
#define KF_TPR 32
#else
#define KF_TPR BLOCK
#endif
#define KF_RPB (BLOCK / KF_TPR)
#define KF_MAXC (HOLD / VEC)
#define KF_CLAMP(c) ((c) <= KF_MAXC ? (c) : 0)

#if STREAM
#define KF_LDS(p) __ldcs (p)
#define KF_STS(p, v) __stcs (p, v)
#else
#define KF_LDS(p) (*(p))
#define KF_STS(p, v) (*(p) = (v))
#endif

/* VEC floats of a row at P, read or written for the last time. */
__device__ __forceinline__ void
kf_load_last (const float *p, float *v)
{
#if VEC == 4
    float4 t = KF_LDS ((const float4 *) p);
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
#elif VEC == 2
    float2 t = KF_LDS ((const float2 *) p);
    v[0] = t.x; v[1] = t.y;
#else
    v[0] = KF_LDS (p);
#endif
}

__device__ __forceinline__ void
kf_store_last (float *p, const float *v)
{
#if VEC == 4
    KF_STS ((float4 *) p, make_float4 (v[0], v[1], v[2], v[3]));
#elif VEC == 2
    KF_STS ((float2 *) p, make_float2 (v[0], v[1]));
#else
    KF_STS (p, v[0]);
#endif
}

/* A sum or maximum over the threads of one row. */
template <bool IS_MAX>
__device__ __forceinline__ float
kf_row_reduce (float v)
{
#if KF_ROW == KF_warp
    for (int off = 16; off > 0; off >>= 1)
        v = kf_op<IS_MAX> (v, __shfl_xor_sync (0xffffffffu, v, off));
    return v;
#else
    return kf_block_reduce<IS_MAX> (v);
#endif
}

/* Two values reduced together over the threads of one row, one round of
 * barriers for both; OP merges a pair into another. */
#if KF_ROW == KF_block && KF_RED == KF_smem
#define KF_PAIR_SLOTS BLOCK
#else
#define KF_PAIR_SLOTS 32
#endif
template <class OP>
__device__ __forceinline__ void
kf_row_reduce2 (float &a, float &b)
{
#if KF_ROW == KF_warp || KF_RED == KF_shfl
    for (int off = 16; off > 0; off >>= 1) {
        float a2 = __shfl_xor_sync (0xffffffffu, a, off);
        float b2 = __shfl_xor_sync (0xffffffffu, b, off);
        OP::merge (a, b, a2, b2);
    }
#endif
#if KF_ROW == KF_block
    __shared__ float pa[KF_PAIR_SLOTS], pb[KF_PAIR_SLOTS];
#if KF_RED == KF_shfl
    if ((threadIdx.x & 31) == 0) {
        pa[threadIdx.x >> 5] = a;
        pb[threadIdx.x >> 5] = b;
    }
    __syncthreads ();
    if (threadIdx.x < 32) {
        a = threadIdx.x < BLOCK / 32 ? pa[threadIdx.x] : OP::id_a ();
        b = threadIdx.x < BLOCK / 32 ? pb[threadIdx.x] : OP::id_b ();
        for (int off = 16; off > 0; off >>= 1) {
            float a2 = __shfl_xor_sync (0xffffffffu, a, off);
            float b2 = __shfl_xor_sync (0xffffffffu, b, off);
            OP::merge (a, b, a2, b2);
        }
        if (threadIdx.x == 0) {
            pa[0] = a;
            pb[0] = b;
        }
    }
#else
    pa[threadIdx.x] = a;
    pb[threadIdx.x] = b;
    __syncthreads ();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float x = pa[threadIdx.x], y = pb[threadIdx.x];
            OP::merge (x, y, pa[threadIdx.x + s], pb[threadIdx.x + s]);
            pa[threadIdx.x] = x;
            pb[threadIdx.x] = y;
        }
        __syncthreads ();
    }
#endif
    __syncthreads ();
    a = pa[0];
    b = pb[0];
    __syncthreads ();    /* pa and pb are reused by the next row */
#endif
}

struct kf_sum2 {
    static __device__ __forceinline__ float id_a () { return 0.0f; }
    static __device__ __forceinline__ float id_b () { return 0.0f; }
    static __device__ __forceinline__ void
    merge (float &a, float &b, float a2, float b2) { a += a2; b += b2; }
};

/* Loops over the row of this thread's group: vector steps when VEC-wide
 * access is allowed (VW nonzero), single floats otherwise. */
#define KF_ROW_FOR(n, vw, ...)                                             \
    if (vw) {                                                              \
        for (int64_t i = (int64_t) t * VEC; i < (n); i += (int64_t) KF_TPR * VEC) { \
            const int w = VEC;                                             \
            __VA_ARGS__                                                    \
        }                                                                  \
    }                                                                      \
    else {                                                                 \
        for (int64_t i = t; i < (n); i += KF_TPR) {                        \
            const int w = 1;                                               \
            __VA_ARGS__                                                    \
        }                                                                  \
    }

/* The rows of this block (or of this warp), grid-stride: T is the
 * thread's place in its row's group, R the row. */
#define KF_FOR_ROWS(rows)                                                  \
    const int t = threadIdx.x % KF_TPR;                                    \
    for (int64_t r = (int64_t) blockIdx.x * KF_RPB + threadIdx.x / KF_TPR; r < (rows); \
         r += (int64_t) gridDim.x * KF_RPB)

/* Chunk c of this thread's share of a row held in registers starts at
 * float (c * KF_TPR + t) * VEC: neighbouring threads read neighbouring
 * vectors. */
#define KF_CHUNK(c) (((c) * KF_TPR + t) * VEC)

static int
kf_aligned (const void *p)
{
    return (uintptr_t) p % (VEC * sizeof (float)) == 0;
}

/* Registers for a row of N floats: the smallest power of two C up to
 * HOLD / VEC with KF_TPR * VEC * C >= N, or 0 when it does not fit or VEC-
 * wide access is not allowed (the loops then). */
static int
kf_chunks (int64_t n, int vw)
{
    for (int c = 1; vw && c <= KF_MAXC; c *= 2)
        if ((int64_t) KF_TPR * VEC * c >= n)
            return c;
    return 0;
}

/* The kernel instance for C chunks; one launch site, whatever C is. */
#define KF_PICK(kern, K, c)                                                \
    switch (c) {                                                           \
    case 1: kern = K<KF_CLAMP (1)>; break;                                 \
    case 2: kern = K<KF_CLAMP (2)>; break;                                 \
    case 4: kern = K<KF_CLAMP (4)>; break;                                 \
    case 8: kern = K<KF_CLAMP (8)>; break;                                 \
    case 16: kern = K<KF_CLAMP (16)>; break;                               \
    case 32: kern = K<KF_CLAMP (32)>; break;                               \
    case 64: kern = K<KF_CLAMP (64)>; break;                               \
    case 128: kern = K<KF_CLAMP (128)>; break;                             \
    default: kern = K<0>; break;                                           \
    }

static unsigned
kf_grid (int64_t rows)
{
    int64_t groups = (rows + KF_RPB - 1) / KF_RPB;
    return (unsigned) (groups < 0x7fffffff ? groups : 0x7fffffff);
}
