/*  kf_memory.h - memory across runs: elites of earlier runs of the same
 *  op on the same target, offered to a new run's prompts as inspirations.
 *
 *  A second run of an op starts from nothing but its baseline although
 *  earlier runs found fast kernels for it. With the run-config switch
 *  `memory` on (the default; `kfctl submit --no-memory` turns it off)
 *  each main-phase prompt that has inspirations carries one more: a
 *  correct, counted archive elite of an earlier finished run with the
 *  same op (the task's "op", else its name), the same language and the
 *  same target backend (and, for CUDA, the same arch), marked in the
 *  prompt as from that run with that run's speedup, which was measured
 *  against that run's own reference timing. It is only ever shown: it
 *  never enters this run's archive, so it is never a parent and never
 *  the run's best (docs/search.md, "Inspirations").
 *
 *  The pool is read from the database at each plan (only runs that
 *  finished before this one was submitted, so it does not change while
 *  the run goes on), and the pick is a draw of the run's splitmix64
 *  streams (kf_select.h), so a replay chooses alike.
 */
#ifndef KF_MEMORY_H
#define KF_MEMORY_H

#include "kf_db.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Remembered elites a draw chooses among: the fastest distinct sources. */
#define KF_MEMORY_POOL 8

/* The remembered inspiration of candidate SEQ of RUN (a run row: id,
 * seed, target, language, spec, name) as a prompt kernel
 * (kf_prompt_kernel) with "from_run" (the earlier run's id) and
 * "from_run_speedup" added; caller's. NULL when no earlier run has one,
 * or on a database error (then *FAILED is set). */
json_t *kf_memory_pick (kf_db_t *db, json_t *run, int64_t seq, bool *failed);

/* What candidates.selection records of a remembered inspiration K:
 * {run, candidate, speedup}. Caller's. */
json_t *kf_memory_note (json_t *k);

/* Index into a pool of N of candidate SEQ's draw under RUN_SEED; pure. */
int kf_memory_draw (int64_t run_seed, int64_t seq, int n);

#endif
