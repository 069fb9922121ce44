/*  kf_meta.h - meta-prompt evolution: the evolvable sections of a run's
 *  generation prompt rewritten by a second model from real outcomes.
 *
 *  Each run keeps prompt versions in PostgreSQL (prompt_versions): the four
 *  evolvable sections (kf_prompt.h), the version they were edited from,
 *  the generation that made them and the edits that did. A version's
 *  fitness is the mean value of its latest kernels (a failure's fitness,
 *  a correct kernel's speedup on a log scale against the run's best:
 *  kf_meta_score.h); the run's prompt
 *  archive holds the `prompt_archive` fittest (default 16) and each new
 *  candidate is written with the version of the best score, its fitness
 *  plus an exploration bonus (kf_meta_score.h). Every `meta_every`
 *  generations' worth of finished candidates (default 10; more often in a
 *  run shorter than 4 x that) a "meta" job (role generate, model
 *  `meta_model`) is queued - once a kernel written with the version it
 *  edits has finished (kf_meta_judged) - with the sections, the recent outcomes with
 *  their figures from the evaluations table, the load each was timed
 *  under and what each kernel did (its idea, where it left its parent's
 *  cell, the point a sweep chose), and the code behind the best
 *  and worst of them; its reply holds SEARCH/REPLACE edits, at most
 *  `meta_max_edits` (default 3) of which are applied, only inside the
 *  sections. Every proposed edit, accepted or not, is logged in
 *  prompt_edits with the reason. `meta_prompting: false` in the run's
 *  config turns all of it off: every candidate then gets the default
 *  sections. docs/prompts.md describes the loop.
 *
 *  Like kf_search.h, every function runs inside the caller's open
 *  transaction, and replaying one after a crash does nothing twice. The
 *  edits' format and their checks are kf_meta_edits.h's (included).
 */
#ifndef KF_META_H
#define KF_META_H

#include "kf_meta_edits.h"
#include "kf_msg_generate.h"
#include "kf_search_stage.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The defaults, as in the paper's Table 6. */
#define KF_META_EVERY 10          /* generations between meta jobs */
#define KF_META_MAX_EDITS 3       /* edits applied per meta job */
#define KF_META_ARCHIVE 16        /* prompt versions kept */

/* The evolvable sections a new candidate of RUN_ID is to be written with
 * (caller's): a version picked from the run's prompt archive, the run's
 * first version (the defaults) created when it has none. *VERSION_ID
 * (may be NULL) gets the version's id, 0 when meta-prompting is off (the
 * defaults are returned then). With meta-prompting on, the object also
 * holds, under KF_META_NOTE_KEY, where the meta rounds stand and any
 * newer version passed over (kf_meta_note.h), for the kernel prompt's
 * version line. NULL on a database error. */
json_t *kf_meta_sections (kf_search_t *self, int64_t run_id, int64_t *version_id);

/* Records that CANDIDATE_ID was written with VERSION_ID (0: nothing). */
int kf_meta_attach (kf_search_t *self, int64_t candidate_id, int64_t version_id);

/* CANDIDATE_ID of RUN_ID reached its final state, or its full-protocol
 * figure came in: its prompt version's fitness follows, and when enough
 * candidates have finished since the last meta job, the next one is
 * queued (once no full-protocol timing is in flight, or a generation's
 * worth more have finished: kf_meta_waits). */
int kf_meta_after_candidate (kf_search_t *self, int64_t run_id, int64_t candidate_id);

/* Every prompt version of RUN_ID gets its fitness again from its latest
 * finished kernels against the run's best speedup (kf_meta_score.h): after
 * each final candidate, and when a full-protocol figure replaces a screen
 * one. */
int kf_meta_refit (kf_search_t *self, int64_t run_id);

/* A "meta" JOB completed with RESULT (its text, decoded at the edge): its
 * edits are checked and logged, and the accepted ones make a new version.
 * Returns 0 for a job of another kind too (nothing done). */
int kf_meta_job_done (kf_search_t *self, json_t *job, const kf_generate_result_t *result);

/* A "meta" JOB failed for good: logged; the run goes on with the versions
 * it has (a meta job never fails its run). */
int kf_meta_job_failed (kf_search_t *self, json_t *job, const char *reason);

/* What `kfctl show` reports of RUN_ID's prompts (caller's), merged into
 * the SHOW reply: {prompt_versions: [{id, number, parent, generation,
 * fitness, best_speedup, candidates, in_archive, edits, meta_job_id}],
 * prompt_rejected: [{id, job_id, section, search, reason}] (the latest
 * 20), meta_jobs}, or NULL on a database error. */
json_t *kf_meta_show (kf_db_t *db, int64_t run_id);

/* The run config's settings with their defaults filled in:
 * {meta_prompting, meta_every, meta_max_edits, prompt_archive, meta_model}
 * (caller's). */
json_t *kf_meta_settings (json_t *run_config);

#endif
