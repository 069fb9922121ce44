/*  kf_coord_fit.h - whether the connected fleet can serve a run: a model
 *  some gateway can answer, a target some exec worker runs. Said at
 *  SUBMIT, shown on a running run that waits for such a worker, and a run
 *  that waited past worker_wait_s fails with the reason (docs/kfctl.md).
 */
#ifndef KF_COORD_FIT_H
#define KF_COORD_FIT_H

#include "kf_coord_internal.h"

/* Whether every model GENERATOR names ({models: [{model}], first_model,
 * meta_model}) is served by some connected gateway. With no gateway
 * connected nothing is refused (one may come). Returns 0, or -1 with
 * *WHY (caller frees) saying which model and what would make it served. */
int kf_coord_fit_models (kf_coord_t *self, json_t *generator, char **why);

/* NULL when some connected exec worker runs TARGET ("cuda", "cuda:sm_90")
 * and, with TORCH (a PyTorch problem), has a Python with torch; else a
 * sentence for the submitter (caller frees). */
char *kf_coord_fit_target (kf_coord_t *self, const char *target, bool torch);

/* Adds "waiting" (a sentence) to RUN, a running run's object, when some
 * of its queued jobs can be taken by no connected worker. */
void kf_coord_fit_annotate (kf_coord_t *self, json_t *run);

/* Fails every running run whose queued jobs no connected worker could
 * take for worker_wait_s. Called about once a second, inside the loop's
 * transaction (kf_coord_cron), LAST_PASS the zclock_mono of the call
 * before; looks at the queue only every few seconds. */
void kf_coord_fit_check (kf_coord_t *self, int64_t last_pass);

#endif
