/*  kf_meta_outcomes.h - what the meta job (kf_meta.c) shows of a run's
 *  outcomes: the recent candidates, each with the figures of the
 *  evaluation its standing rests on, read from the evaluations table and
 *  never from a summary of it, so what the meta-prompter reads is what
 *  was measured; and the code behind the best and the worst of them.
 */
#ifndef KF_META_OUTCOMES_H
#define KF_META_OUTCOMES_H

#include "kf_db.h"
#include <jansson.h>
#include <stdint.h>

/* RUN_ID's LIMIT latest finished candidates in DB, oldest first, with
 * their evaluations' figures, what each did (idea, parent, the point a
 * sweep chose) and, for a timed one, its source (for its threads; not
 * sent), as kf_meta_prompt.c reads them (caller's); NULL on a database
 * error. */
json_t *kf_meta_outcomes (kf_db_t *db, int64_t run_id, int limit);

/* Round 33: a full-protocol figure faster than the run's counted best
 * (BEST_ID's COUNTED speedup) reads "counted" until its second timing is
 * queued, and a meta edit citing candidate 2's 1.93 ms (timed again at
 * 4.04 ms) went in unmarked. Such an outcome of OUTCOMES is given the
 * standing "being re-verified", which it is about to have: the prompt
 * and the evidence rules then say so alike. */
void kf_meta_outcomes_awaiting (json_t *outcomes, int64_t best_id, double counted);

/* The kernels behind the best and the worst of OUTCOMES (by fitness; on
 * equal fitness the faster, then the newer), among those with a source,
 * as prompt kernel objects into *BEST and *WORST (the caller's; NULL when
 * there is none, *WORST also when it would be *BEST). 0, or -1. */
int kf_meta_extremes (kf_db_t *db, json_t *outcomes, json_t **best, json_t **worst);

#endif
