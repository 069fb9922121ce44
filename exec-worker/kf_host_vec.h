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
 * estimate's cost, and the FMA rate with an operand from memory. And for
 * X in perm (vpermps), shuf (vshufps), blend (vblendvps with 256 bits,
 * vblendmps with a mask register with 512), and (vandps; vpandd), cmp
 * (vcmpps, into a mask register with 512), cvt (vcvtps2dq) and iadd
 * (vpaddd): "vec_X_cycles", X's throughput alone, and
 * "vec_X_with_fma_cycles", the cycles of two independent FMAs and one X
 * issued in turn, many such groups in flight: near the two FMAs' own (2
 * x vec_fma_cycles) where X runs on other units, an FMA's more or so
 * where it takes the FMAs' units. Round 20: the model could not tell
 * which instructions compete with FMAs for execution ports, which differ
 * from core to core. Round 21 (a log1p and sigmoid of some 40 mixed ops
 * a vector; a GEMM's horizontal sums), the same way: X in round
 * (vroundps; vrndscaleps with 512 bits), shift (vpslld by 23), max
 * (vmaxps; vminps shares its units), cvtf (vcvtdq2ps) and hadd (vhaddps,
 * 256 bits only: with AVX-512 it is left out, having no 512-bit form;
 * its mix is four FMAs and one, as it takes two FMAs' time alone and a
 * mix of two could not show it on their units). Each figure from 21
 * pairs of runs of about 10 us,
 * the add chain then the instruction (fma_mem, divsqrt and the X figures:
 * their base instruction, the FMA alone or the divide, then the
 * instruction, and the base's cycles times the ratio): the median ratio
 * of the pairs where both runs came within 2% of their fastest. About
 * 35 ms of CPU in all, 10 of them warming the wide units. A figure not
 * measured is left out. Returns the number of keys added. */
int kf_host_vec_costs (json_t *device);

/* A ratio to a base instruction that cannot fall under LEAST (a mix of
 * two FMAs and one X takes at least the two FMAs' time), as MEASURE (ARG)
 * reads it: measured again, up to TRIES readings in all, while it reads
 * under 0.95 LEAST (a neighbour on the core slowed the base's runs more
 * than the op's; the 5% is the clock's and the pairs' room), and LEAST
 * where every reading did. A reading of 0 or less (a run took no time)
 * is returned as read. CI read a mix of two FMAs and vcvtps2dq at 1.78
 * FMAs' time, and the Target section would have carried it. */
double kf_host_vec_floored (double (*measure) (void *), void *arg, double least, int tries);

#endif
