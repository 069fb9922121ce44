/*  kfctl_archive.h - what `kfctl show` prints of a run beyond its tables
 *  (the MAP-Elites archive, the prompt versions), and what `kfctl show
 *  --json` adds to the SHOW reply.
 */
#ifndef KFCTL_ARCHIVE_H
#define KFCTL_ARCHIVE_H

#include <jansson.h>
#include <stdio.h>

/* The archive of a SHOW reply BODY (borrowed): a 4x4 grid per pair of
 * dimensions (memory x algorithm, memory x synchronisation, algorithm x
 * synchronisation), each cell the best elite speedup over the third
 * dimension; then the best kernel and its lineage. */
void kf_ctl_print_archive (FILE *out, json_t *body);

/* The prompt versions of a SHOW reply BODY (borrowed): number, parent,
 * generation created, fitness, best speedup, kernels written, whether the
 * prompt archive holds it, and its edits in short; then the rejected
 * meta-prompt edits. Nothing when the run has no versions. */
void kf_ctl_print_prompts (FILE *out, json_t *body);

/* Adds to a SHOW reply BODY what `kfctl show --json` carries beyond the
 * reply: `cells` [{coords [m,a,s], candidate_id (the elite), speedup,
 * fitness}], `best` and `first_correct` ({candidate_id, generation, slot,
 * speedup, coords} or null). */
void kf_ctl_show_extend (json_t *body);

/* The name of dimension DIM (0 memory, 1 algorithm, 2 synchronisation)
 * and of its LEVEL (docs/descriptors.md) in the words of a run on TARGET
 * (the host's: SIMD, cache blocking, threads), or "?" (static strings). */
const char *kf_ctl_dim_name (const char *target, int dim);
const char *kf_ctl_level_name (const char *target, int dim, int level);

#endif
