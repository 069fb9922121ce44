/*  kf_search.h - what a run does next when one of its jobs ends.
 *
 *  The search of docs/search.md: a run is generations x population
 *  candidates of MAP-Elites, planned steady-state (up to max_in_flight
 *  open at once), then a few parameter-tuning rounds; every candidate goes
 *  generate -> compile -> evaluate. Every function runs inside the
 *  caller's open transaction, so a job's completion and all its
 *  consequences commit together or not at all: that is what lets a
 *  coordinator killed at any moment continue every run where it was.
 *
 *  The context kf_search_t and what the stages of a run call back (begin,
 *  queue a job or an event, end the run) are in kf_search_stage.h,
 *  included here.
 */
#ifndef KF_SEARCH_H
#define KF_SEARCH_H

#include "kf_msg_compile.h"
#include "kf_msg_eval.h"
#include "kf_msg_generate.h"
#include "kf_msg_reference.h"
#include "kf_search_stage.h"
#include <czmq.h>
#include <jansson.h>
#include <stdbool.h>

/* The search defaults: the built-in coordinator/search-defaults.json
 * (which names every key), with the keys of the JSON file PATH on top when
 * PATH is not NULL or empty. Each key must be known and within bounds.
 * NULL with *WHY (caller frees) naming the file, the line or the key, when
 * not. */
json_t *kf_search_defaults_load (const char *path, char **why);

/* The default of KEY in force (borrowed), or NULL. */
json_t *kf_search_default (kf_search_t *self, const char *key);

/* Checks a SUBMIT's CONFIG: no unknown key, and the search keys it names
 * within their types and bounds (the other keys' values are checked by
 * their owners); copies the search keys into OUT when OUT is not NULL.
 * Returns 0, or -1 with *WHY (caller frees). */
int kf_search_config_check (json_t *config, json_t *out, char **why);

/* Creates the run's reference compile job. */
int kf_search_start_run (kf_search_t *self, int64_t run_id);

/* A job's result as the edge decoded it (kf_coord_workers.c): the member
 * of its kind set, the others NULL. Borrowed. */
typedef struct {
    const kf_eval_result_t *eval;             /* evaluate */
    const kf_compile_result_t *compile;       /* compile */
    const kf_generate_result_t *gen;          /* generate, meta */
    const kf_reference_result_t *ref;         /* reference */
} kf_search_typed_t;

/* JOB is the row of a job that just completed (id, run_id, candidate_id,
 * kind); RESULT its result object; TYPED (may be NULL) the same result
 * decoded at the edge; FRAMES its binary frames. All borrowed. A job of
 * a run that comes without its decoding has its result decoded here; a
 * malformed one fails like a job that failed for good
 * (kf_search_job_failed). */
int kf_search_job_done (kf_search_t *self, json_t *job, json_t *result,
                        const kf_search_typed_t *typed, zmsg_t *frames);

/* JOB failed for good (attempts exhausted): REASON is kept. */
int kf_search_job_failed (kf_search_t *self, json_t *job, const char *reason);

/* A person's verdict on a candidate the evaluator flagged for audit:
 * ACCEPT lets it count towards the run's best and first-correct figures;
 * a rejection also takes it out of the archive. Returns 0 with *OUT (the
 * candidate, its run's figures after the verdict; caller's), 1 when the
 * candidate does not exist or was not flagged, -1 on a database error. */
int kf_search_audit (kf_search_t *self, int64_t cand_id, bool accept, json_t **out);

/* Recomputes the run's best and first-correct figures from the
 * candidates that count (correct, not held for audit, not waiting for a
 * re-verification). Returns {best_candidate_id, best_speedup,
 * first_speedup} (caller's), or NULL on a database error. */
json_t *kf_search_run_figures (kf_search_t *self, int64_t run_id);

/* Records the evaluation RESULT of evaluate JOB (its row: id, worker) of
 * CAND_ID in the evaluations table, with the job's fidelity; the figures
 * stored are RESULT's JSON as received. A replay records nothing twice.
 * Returns 0, or -1. */
int kf_search_record_evaluation (kf_search_t *self, json_t *job, int64_t cand_id,
                                 const kf_eval_result_t *result);

/* Offers CAND_ID of RUN_ID to its archive cell at SPEEDUP and FITNESS
 * (decimal text): MAP-Elites insertion, docs/search.md; a candidate that
 * holds its cell afterwards and has no profile job gets one where a worker
 * can profile (kf_search_profile_elite). Returns 0, or -1. */
int kf_search_archive_offer (kf_search_t *self, int64_t run_id, int64_t cand_id,
                             const char *speedup, const char *fitness);

/* Makes CAND_ID of RUN_ID final with STATUS, SPEEDUP (correct only) and
 * DETAIL, with everything that follows (transition, archive, figures,
 * meta credit, the next plans). Returns 0, or -1. */
int kf_search_finish_candidate (kf_search_t *self, int64_t run_id, int64_t cand_id,
                                const char *status, double speedup, const char *detail);

/* Fitness of an evaluated candidate (docs/search.md). */
double kf_search_fitness (const char *verdict, double speedup);

#endif
