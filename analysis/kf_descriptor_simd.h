/*  kf_descriptor_simd.h - whether a source computes in vector registers,
 *  for the descriptor, the compiler report and the prompt's readings.
 */
#ifndef KF_DESCRIPTOR_SIMD_H
#define KF_DESCRIPTOR_SIMD_H

#include <stdbool.h>

/* Whether CODE (comments and strings blanked) computes in vector
 * registers: an x86 intrinsic other than those that only move data
 * (load, store, stream, set, setzero, broadcast, cast, fences,
 * prefetch), or a vector type it does arithmetic on by operators (GCC's
 * vector_size, clang's ext_vector_type, NEON's float32x4_t and the
 * like). Round 25: a kernel whose scalar math went through an L1 buffer
 * into _mm256_stream_ps read as explicit SIMD, so its compiler report
 * called its branchy element loop "a loop around the vector code, which
 * needs nothing", and the planner gave it an idea for vectorised code. */
bool kf_descriptor_simd_math (const char *code);

#endif
