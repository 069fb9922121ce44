/*  kf_prompt_core.h - the host's core in the Target section: what it is
 *  by its CPUID family and model, what its vector divide, square root,
 *  reciprocal estimate and FMA cost in cycles, and which other vector
 *  instructions share the FMAs' units (kf_prompt_core.c).
 *
 *  Round 15 of the model in the loop: a virtual machine's model name was
 *  "AMD EPYC", so the model guessed the core's generation; and choosing
 *  between vdivps, rcp14 with a Newton step and a division-free formula,
 *  it had no cost for any of them.
 */
#ifndef KF_PROMPT_CORE_H
#define KF_PROMPT_CORE_H

#include <jansson.h>
#include <stdio.h>

/* The microarchitecture of a CPU whose CPUID vendor string is VENDOR
 * ("AuthenticAMD", "GenuineIntel") with display FAMILY and MODEL, from a
 * small table (AMD Zen generations; a few Intel server cores): static
 * text, or NULL when the table has no entry for it. */
const char *kf_prompt_cpu_uarch (const char *vendor, long family, long model);

/* Writes one line on host device D's CPU by its CPUID vendor, family and
 * model (exec-worker/kf_host_caps.c's "cpu_vendor", "cpu_family",
 * "cpu_model"), with the microarchitecture where the table knows it;
 * nothing when D lacks them. */
void kf_prompt_host_cpu_line (FILE *f, json_t *d);

/* Writes one line on host device D's measured vector instruction costs
 * (exec-worker/kf_host_vec.c's "vec_lanes", "vec_OP_cycles",
 * "vec_OP_latency_cycles"): each instruction's throughput and latency in
 * cycles, and what a divide and a square root cost in FMAs and an
 * estimate with one Newton step costs against a divide (derived, and
 * said to be). Nothing when D has no such figures. */
void kf_prompt_host_vec_line (FILE *f, json_t *d);

/* Writes one line on which of host device D's vector instructions share
 * the FMAs' execution units and which run beside them, from each
 * instruction's measured mix with FMAs (exec-worker/kf_host_vec.c's
 * "vec_X_with_fma_cycles": two independent FMAs and one X in turn) set
 * against the FMAs alone ("vec_fma_cycles") and X alone
 * ("vec_X_cycles"), with those cycles. Round 20: the model could not
 * tell which instructions compete with its FMAs. Round 21: five more
 * (vroundps, vpslld, vmaxps, vcvtdq2ps, vhaddps, whose mix is four FMAs
 * and one), the FMAs' time each op partly or wholly on their units adds,
 * and a rule of thumb from the figures turning a formula's op counts
 * into cycles a vector. Nothing when D has no such figures. */
void kf_prompt_host_units_line (FILE *f, json_t *d);

#endif
