/*  kf_splitmix.h - splitmix64, the one pseudo-random sequence of the
 *  project: small, fast, seedable from any integer and the same on every
 *  platform, which determinism needs (rand() is not). The offline
 *  generator draws its parameter points from it; the evaluation draws
 *  every input element from it (exec-worker/kf_eval_elem.h), on the host
 *  and, compiled by nvcc into the CUDA judge, on the device.
 */
#ifndef KF_SPLITMIX_H
#define KF_SPLITMIX_H

#include <stdint.h>

#ifdef __CUDACC__
#define KF_SPLITMIX_FN static __host__ __device__ __forceinline__
#else
#define KF_SPLITMIX_FN static inline
#endif

//  The step added to the state per draw (2^64 over the golden ratio).
#define KF_SPLITMIX_GOLDEN 0x9e3779b97f4a7c15ULL

//  The next value of the sequence whose state is *STATE, advancing it.
KF_SPLITMIX_FN uint64_t
kf_splitmix_next (uint64_t *state)
{
    uint64_t z = (*state += KF_SPLITMIX_GOLDEN);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
