/*  kf_stop.h - early stopping: a run whose best has stalled ends its
 *  main phase.
 *
 *  A search that has not found anything better for many generations
 *  spends tokens and fleet time on a plateau. With `stop_after` K > 0 the
 *  main phase ends once the run's best counted speedup has not risen by
 *  more than `stop_margin` (relative) for K consecutive completed
 *  generations; the tuning rounds still follow, and the run's reason
 *  says why it stopped (docs/search.md, "The end").
 *
 *  Only a prefix of completed generations is read (every candidate final,
 *  none waiting for a re-verification or a full timing), and it is
 *  scanned in order to the first generation at which the rule fires, so
 *  the verdict does not change when later candidates in flight finish
 *  and is the same after a restart.
 */
#ifndef KF_STOP_H
#define KF_STOP_H

#include "kf_db.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool stop;           /* the rule fired */
    int at;              /* the generation after which it fired */
    int since;           /* the generation that set the record */
    double record;       /* the best speedup that was not beaten */
} kf_stop_t;

/* The rule over the first N completed generations: BEST[g] is the best
 * counted speedup among generation g's candidates (0: none correct).
 * The record is the running best; a generation raises it when its
 * running best exceeds record * (1 + MARGIN), and the rule fires at the
 * first generation that is STOP_AFTER generations past the one that set
 * the record. Nothing fires before there is a record, nor with
 * STOP_AFTER <= 0. Pure; fills OUT. */
void kf_stop_rule (const double *best, int n, int stop_after, double margin, kf_stop_t *out);

/* The rule for RUN_ID (POPULATION candidates a generation) from its
 * candidates. Returns 1 and writes the reason into WHY ("stopped early
 * after 4 of 40 generations: no improvement over 1.52x by more than 2% in
 * 2 generations") when the main phase is to end, 0 when not (or when
 * STOP_AFTER is 0), -1 on a database error. */
int kf_stop_check (kf_db_t *db, int64_t run_id, int generations, int population,
                   int stop_after, double margin, char *why, size_t size);

#endif
