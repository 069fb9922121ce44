/* Named parameter values (RED=subgroup) become numbers through these, so
 * -DRED=tree on the compiler's command line works as well. */
#define KF_CAT_(a, b) a##b
#define KF_CAT(a, b) KF_CAT_ (a, b)
#define KF_tree 0
#define KF_builtin 1
#define KF_subgroup 2
#define KF_RED KF_CAT (KF_, RED)

#pragma OPENCL EXTENSION cl_khr_subgroups : enable

static float
kf_op (float a, float b, int is_max)
{
    return is_max ? fmax (a, b) : a + b;
}

/* A sum (IS_MAX 0) or maximum over the work-group's WG work-items,
 * returned to all of them; PART is WG floats of local memory. RED=tree is
 * the classic local-memory tree, a barrier per halving; RED=builtin the
 * OpenCL 2.0 work-group collective, which the driver implements as it
 * sees fit; RED=subgroup reduces each sub-group in registers and only
 * the sub-group results through local memory. */
static float
kf_group_reduce (float v, int is_max, __local float *part)
{
#if KF_RED == KF_builtin
    return is_max ? work_group_reduce_max (v) : work_group_reduce_add (v);
#elif KF_RED == KF_subgroup
    v = is_max ? sub_group_reduce_max (v) : sub_group_reduce_add (v);
    if (get_sub_group_local_id () == 0)
        part[get_sub_group_id ()] = v;
    barrier (CLK_LOCAL_MEM_FENCE);
    float r = part[0];
    for (uint i = 1; i < get_num_sub_groups (); i++)
        r = kf_op (r, part[i], is_max);
    barrier (CLK_LOCAL_MEM_FENCE);    /* PART is reused by the next reduction */
    return r;
#else
    uint lid = get_local_id (0);
    part[lid] = v;
    barrier (CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            part[lid] = kf_op (part[lid], part[lid + s], is_max);
        barrier (CLK_LOCAL_MEM_FENCE);
    }
    float r = part[0];
    barrier (CLK_LOCAL_MEM_FENCE);    /* PART is reused by the next reduction */
    return r;
#endif
}

/* VEC consecutive floats at P + I, and back. vloadn needs only float
 * alignment, so any row start works. */
static void
kf_load (const __global float *p, long i, float *v)
{
#if VEC == 4
    float4 t = vload4 (0, p + i);
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
#elif VEC == 2
    float2 t = vload2 (0, p + i);
    v[0] = t.x; v[1] = t.y;
#else
    v[0] = p[i];
#endif
}

static void
kf_store (__global float *p, long i, const float *v)
{
#if VEC == 4
    vstore4 ((float4) (v[0], v[1], v[2], v[3]), 0, p + i);
#elif VEC == 2
    vstore2 ((float2) (v[0], v[1]), 0, p + i);
#else
    p[i] = v[0];
#endif
}

/* Loops a work-group over the N floats of row SRC: VEC at a time while
 * they fit, then the rest one by one. The body sees v[0..w-1] for the
 * elements from index i; w is VEC or 1. Variadic because a body has
 * commas of its own. */
#define KF_ROW_LOOP(src, n, ...)                                           \
    for (long i = (long) get_local_id (0) * VEC; i + VEC <= (n);           \
         i += (long) WG * VEC) {                                           \
        const int w = VEC;                                                 \
        float v[VEC];                                                      \
        kf_load ((src), i, v);                                             \
        __VA_ARGS__                                                        \
    }                                                                      \
    for (long i = (n) / VEC * VEC + get_local_id (0); i < (n); i += WG) {  \
        const int w = 1;                                                   \
        float v[VEC];                                                      \
        v[0] = (src)[i];                                                   \
        __VA_ARGS__                                                        \
    }

/* Writes v[0..w-1] back to DST at index i, inside KF_ROW_LOOP. */
#define KF_ROW_STORE(dst)                                                  \
    if (w == VEC)                                                          \
        kf_store ((dst), i, v);                                            \
    else                                                                   \
        (dst)[i] = v[0];
