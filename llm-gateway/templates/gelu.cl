@BANNER@
/* kf-launch: kf_gelu_all(@X@, @Y@, numel(@X@):long) global=round_up(cdiv(numel(@X@), VEC), WG) local=WG */
@DEFINES@

@PRELUDE@

#define KF_tanh 0
#define KF_exp 1
#define KF_native 2
#define KF_IMPL KF_CAT (KF_, IMPL)

/* GELU, tanh form. 0.5 v (1 + tanh(u)) equals v / (1 + e^(-2u)): one
 * exponential instead of tanh; IMPL=native uses the device's fast
 * native_exp, accurate to a few ulp on Intel GPUs. */
static float
kf_gelu (float v)
{
    float u = 0.7978845608f * (v + 0.044715f * v * v * v);
#if KF_IMPL == KF_tanh
    return 0.5f * v * (1.0f + tanh (u));
#elif KF_IMPL == KF_exp
    return v / (1.0f + exp (-2.0f * u));
#else
    return v / (1.0f + native_exp (-2.0f * u));
#endif
}

/* VEC elements per work-item; the last work-items take the tail one by one. */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
kf_gelu_all (const __global float *restrict x, __global float *restrict y, long total)
{
    long i = (long) get_global_id (0) * VEC;
    if (i + VEC <= total) {
        float v[VEC];
        kf_load (x, i, v);
        for (int k = 0; k < VEC; k++)
            v[k] = kf_gelu (v[k]);
        kf_store (y, i, v);
    }
    else
        for (; i < total; i++)
            y[i] = kf_gelu (x[i]);
}
