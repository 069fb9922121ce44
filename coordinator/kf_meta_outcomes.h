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

/* The kernels behind the best and the worst of OUTCOMES (by fitness; on
 * equal fitness the faster, then the newer), among those with a source,
 * as prompt kernel objects into *BEST and *WORST (the caller's; NULL when
 * there is none, *WORST also when it would be *BEST). 0, or -1. */
int kf_meta_extremes (kf_db_t *db, json_t *outcomes, json_t **best, json_t **worst);

#endif
