/*  kf_search_stage.h - the search as the stages of a run see it.
 *
 *  A stage is a module that takes a run's jobs over for a while (the
 *  reference of kf_reference.c before the first generation, the meta jobs
 *  of kf_meta.c) and hands the run back: it needs the search's context,
 *  to queue jobs and events, to end the run, and to start the search.
 *  That much lives here, apart from kf_search.h, so that such a module
 *  depends on this small interface and not on the search that calls it.
 *  Every function runs inside the caller's open transaction.
 */
#ifndef KF_SEARCH_STAGE_H
#define KF_SEARCH_STAGE_H

#include "kf_db.h"
#include "kf_plausible.h"
#include "kf_search_idea_cache.h"
#include <czmq.h>
#include <jansson.h>

typedef struct {
    kf_db_t *db;
    json_t *events;          /* array of {topic, body} to publish after commit */
    json_t *timing;          /* default evaluate timing (borrowed) */
    int max_attempts;
    int lease_ms[3];         /* generate, compile, execute */
    json_t *defaults;        /* search defaults (kf_search_defaults_load;
                                borrowed); NULL: the built-in ones */
    kf_plausible_rules_t plausible;   /* when a correct result is re-verified
                                         before it counts (kf_verify.c) */
    /* kf_search_fill at work on this run (0: none), and another pass
     * asked for it while it was: a candidate planned by the fill can
     * finish at once (a repeated source takes its twin's verdict), and
     * its finish asks for a fill (kf_search_plan.c). */
    int64_t filling;
    bool fill_again;
    /* What the plans parsed of each run's sources, kept for its next
     * plans (kf_search_idea_cache.h; owned, may be NULL: none kept). */
    kf_search_idea_cache_t *idea_cache;
} kf_search_t;

/* The run's reference is ready (runs.ref_artifact set): plans the first
 * candidates. Whatever prepares a reference calls this once, in the same
 * transaction that stores it. */
int kf_search_begin (kf_search_t *self, int64_t run_id);

/* Queues a job of RUN_ID (CANDIDATE_ID 0: of the run itself); takes
 * PAYLOAD; BLOBS is a text[] literal of blob hashes, or NULL. */
int kf_search_insert_job (kf_search_t *self, int64_t run_id, int64_t candidate_id,
                          const char *role, const char *kind, const char *backend,
                          const char *arch, json_t *payload, const char *blobs);

/* Ends a running run with STATUS and REASON, publishing "finished". */
int kf_search_finish_run (kf_search_t *self, int64_t run_id, const char *status,
                          const char *reason);

/* Splits a target ("cuda:sm_90") into backend and arch (arch may be ""). */
void kf_search_split_target (const char *target, char *backend, size_t bsize, char *arch,
                             size_t asize);

/* Queues run event EVENT (topic "run/ID/") with FIELDS (taken) for
 * publishing after the transaction commits. */
void kf_search_event (kf_search_t *self, int64_t run_id, const char *event, json_t *fields);

#endif
