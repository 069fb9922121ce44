/*  kf_prompt_facts.h - what the task's data is and what "correct" means,
 *  in numbers.
 *
 *  "Match within the task's tolerance" tells a model nothing it can act
 *  on; rtol 1e-2 with 99% of elements and a cosine of 0.99985 tells it
 *  that a polynomial exp with relative error 1e-4 is fine and a bf16
 *  accumulator is not. Likewise a kernel tuned for one shape fails the
 *  others if it does not know them, and a claim that inputs are normal(0,
 *  1) when the reference multiplies them by 2 misleads the numerics.
 */
#ifndef KF_PROMPT_FACTS_H
#define KF_PROMPT_FACTS_H

#include "kf_db.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes the task's tensors (every input with its shape, dtype and how
 * its values are drawn, measured statistics where STATS has them), its
 * scalars with what each stands for, and every shape case. STATS is an
 * array aligned with spec.inputs of {min, max, mean, std, zero_fraction}
 * or null, or NULL. */
void kf_prompt_data_section (FILE *f, json_t *spec, json_t *stats);

/* Writes the correctness rule with the task's numbers: rtol, atol per
 * output dtype, the share of elements that must pass, the cosine, the
 * input sets per shape, and what that leaves room for; OUTPUT_RANGE:
 * kf_prompt_output_range's, or NULL. */
void kf_prompt_tolerance_section (FILE *f, json_t *spec, json_t *output_range);

/* The smallest and largest value over every exported output of MANIFEST
 * ({"min", "max"}, from its entries' stats), or NULL where any output
 * was not summarised (caller's). kf_prompt_tolerance_section reads it:
 * outputs of one sign bound what a term's error costs. */
json_t *kf_prompt_output_range (json_t *manifest);

/* RUN_ID's reference data manifest (runs.ref_data's "tensors"), or NULL
 * (caller's): what the two readings below take. */
json_t *kf_prompt_manifest (kf_db_t *db, int64_t run_id);

/* Statistics of the exported inputs of a PyTorch reference, in
 * spec.inputs order (args, then parameters, then buffers, as the derived
 * task lists them), from the set-0 entries of MANIFEST that carry
 * "stats"; NULL when none does (caller's). */
json_t *kf_prompt_input_stats (json_t *manifest);

/* Writes what a host kernel's call can rely on: its outputs' pages are
 * resident (the judge writes them before every call), and the stack of
 * the thread kf_forward runs on and of the threads it starts. */
void kf_prompt_host_call_facts (FILE *f);

/* Round 13: a matrix product's weight had 4096-byte rows and no prompt
 * said what that does to an L1 cache indexed by address bits 6-11. For a
 * matrix-product or attention task, a sentence naming each tensor of
 * SPEC of two or more dimensions and at least 16 rows whose rows are a
 * multiple of 4096 bytes long, and what follows; nothing when none is. */
void kf_prompt_host_strides (FILE *f, json_t *spec);

/* Whether rows BYTES long alias in a cache indexed by address bits 6-11
 * (a multiple of 4096 bytes): the rule of kf_prompt_host_strides, which
 * the column strip of an epilogue (kf_prompt_epilogue.c) keeps too. */
static inline bool
kf_prompt_stride_aliases (long long bytes)
{
    return bytes > 0 && bytes % 4096 == 0;
}

#endif
