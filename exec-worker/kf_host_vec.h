/*  kf_host_vec.h - what one core's widest f32 vector divide, square
 *  root, reciprocal estimate and FMA cost in cycles, measured at start
 *  (kf_host_vec.c), for the prompt's Target section.
 *
 *  Round 15 of the model in the loop: choosing between vdivps, rcp14 with
 *  a Newton step and a division-free formula, the model had no cost for
 *  any of them.
 */
#ifndef KF_HOST_VEC_H
#define KF_HOST_VEC_H

#include <jansson.h>

/* Measures, on the calling thread, in the widest f32 vector this CPU has
 * (512 bits where it has AVX-512F, else 256 bits where it has AVX2 and
 * FMA; nothing elsewhere), and adds to DEVICE in cycles (against a chain
 * of dependent integer adds, one a cycle on x86, timed beside them):
 * "vec_lanes" (16 or 8), and for each of div (vdivps), sqrt (vsqrtps),
 * rcp (vrcp14ps with 512 bits, vrcpps with 256), rsqrt (vrsqrt14ps,
 * vrsqrtps) and fma (vfmadd213ps) "vec_OP_cycles", the cycles per
 * instruction with many independent ones in flight (throughput), and
 * "vec_OP_latency_cycles", the cycles from one instruction to the next
 * in one dependent chain; throughput alone for load (vmovups from L1),
 * bcast (vbroadcastss from L1), fma_mem (an FMA whose addend comes from
 * L1: a {1to16} broadcast with 512 bits, a whole vector with 256) and
 * divsqrt (a divide and a square root in turn, per instruction: near the
 * average of the two where one unit does both, near half the slower
 * where they run side by side). Round 19: the model asked for loads per
 * cycle, whether divide and square root share a unit, the rsqrt
 * estimate's cost, and the FMA rate with an operand from memory. Each from 21
 * pairs of runs of about 10 us, the add chain then the instruction: the
 * median ratio of the pairs where both runs came within 2% of their
 * fastest. A few milliseconds in all. A figure not measured is left
 * out. Returns the number of keys added. */
int kf_host_vec_costs (json_t *device);

#endif
