/*  kf_meta_history.h - what became of the meta-prompter's earlier edits:
 *  the run's prompt versions, each with the edits that made it, the
 *  kernels written under it and the edits rejected beside it, read from
 *  the database and written as the meta prompt's section (kf_meta_prompt.c
 *  places it). A model that cannot see what its edits did can only guess
 *  again (flagged by the model in the loop, issue 15).
 */
#ifndef KF_META_HISTORY_H
#define KF_META_HISTORY_H

#include "kf_db.h"
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* The run's prompt versions in order (caller's; NULL on a database
 * error): [{number, parent (number, absent for v1), generation, edits
 * [{section, search, replace (empty: a retracted guess)}], in_archive,
 * made_s (when it was made, seconds since the epoch), candidates (finished),
 * verdicts {status: count}, mean_fitness (the version's fitness,
 * kf_meta_score.h), best_speedup (absent when
 * none), rejected [{section, reason}]}], then one entry {round_job,
 * rejected} per meta round that made no version. */
json_t *kf_meta_history (kf_db_t *db, int64_t run_id);

/* Writes the section "What became of your earlier edits" from HISTORY
 * (kf_meta_history's; nothing when empty), BASE the number of the version
 * whose sections the prompt shows: a version that is neither BASE nor one
 * it was made from is marked as not in the sections shown. */
void kf_meta_history_text (FILE *f, json_t *history, int64_t base);

#endif
