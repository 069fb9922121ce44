/*  kf_repeat.h - a source the run has already judged is not judged again.
 *
 *  Models repeat themselves, more so at low temperature and from the same
 *  parent: the same kernel comes back with other comments or spacing. A
 *  repeat costs a compile and a full evaluation and tells the search
 *  nothing new, so it takes the verdict of the candidate it repeats
 *  (docs/search.md, "Repeated sources"). Everything runs inside the
 *  caller's transaction, like the rest of the search.
 */
#ifndef KF_REPEAT_H
#define KF_REPEAT_H

#include "kf_search.h"
#include <stdint.h>

/* CAND_ID of RUN_ID came back with SOURCE (stored as blob HASH) from
 * GENERATOR. Writes its normalised hash into NORM. Returns 1 when it
 * repeats an earlier candidate of the run, which it then waits for
 * (status 'waiting') or has already taken the verdict of; 0 when it is
 * new, or when ON is false (the run's `dedup` switch, for ablations: every
 * source is judged), and the caller compiles it and stores NORM; -1 on a
 * database error. */
int kf_repeat_check (kf_search_t *self, int64_t run_id, int64_t cand_id, const char *source,
                     const char *hash, const char *generator, bool on, char norm[65]);

/* CAND_ID of RUN_ID was just made final: the repeats waiting for it take
 * its verdict. Returns 0, or -1. */
int kf_repeat_resolve (kf_search_t *self, int64_t run_id, int64_t cand_id);

/* The figure of ORIG_ID changed (full protocol, or a re-verification
 * that counts): its correct repeats take it, and so do their parents'
 * moves. Called before the cell of ORIG_ID is chosen again, since its
 * repeats share its cell. Returns 0, or -1. */
int kf_repeat_follow (kf_search_t *self, int64_t orig_id);

#endif
