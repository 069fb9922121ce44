/*  kf_search_int.h - what the files of the search share; nothing outside
 *  them includes it.
 *
 *  kf_search.c is the run's life cycle (its start, the jobs that come
 *  back and where they go, its end); kf_search_config.c the settings and
 *  their defaults; kf_search_plan.c scheduling (what to plan next, and
 *  each candidate's parent and prompt); kf_search_candidate.c the
 *  candidate pipeline (generated, compiled, evaluated, final);
 *  kf_search_archive.c the MAP-Elites archive, fitness, the run's
 *  figures and audit verdicts; kf_search_profile.c the profiles of new
 *  elites. Like kf_search.h, every function runs
 *  inside the caller's open transaction.
 */
#ifndef KF_SEARCH_INT_H
#define KF_SEARCH_INT_H

#include "kf_search.h"
#include "kf_gradient.h"
#include "kf_select.h"
#include <stdbool.h>

/* The final status of a correct candidate. */
#define KF_SEARCH_CORRECT "correct"

/* The generator of a tuning template swept again as it is, its last
 * sweep having been timed beside other work (round 30): not taken for a
 * repeat of that template (kf_repeat.h). */
#define KF_SEARCH_TEMPLATE_AGAIN "template-again"

/* ---- kf_search.c -------------------------------------------------------- */

/* RUN_ID's row with its task's spec and name and the best candidate's
 * source hash (caller's), or NULL. */
json_t *kf_search_run_row (kf_search_t *self, int64_t run_id);

/* Stores DATA in blobs under its SHA-256, written into HASH. 0, or -1. */
int kf_search_store_blob (kf_search_t *self, const void *data, size_t size, char hash[65]);

/* ---- kf_search_config.c ------------------------------------------------- */

/* What planning reads of a run's settings. */
typedef struct {
    int generations, population, in_flight, bins;
    kf_select_config_t select;
    bool islands, gradients, tuning;
    int island_count, migration_every;
    int window, max_hints, min_moves;
    double decay;
    int tuning_rounds, tuning_configs;
    double tuning_near;     /* elites within this fraction of the best are tuned */
    int stop_after;
    double stop_margin;
} kf_search_settings_t;

/* A run's value of KEY: its config's, else the default. Borrowed. */
json_t *kf_search_setting (kf_search_t *self, json_t *run, const char *key);

/* RUN's settings (its row) into ST. */
void kf_search_settings (kf_search_t *self, json_t *run, kf_search_settings_t *st);

/* Why RUN's budget (its config's tokens or usd) is spent, in words
 * written into WHY (SIZE bytes) and returned; NULL while it is not. */
const char *kf_search_budget_spent (json_t *run, char *why, size_t size);

/* Writes the defaults in force into runs.config for every search key the
 * submitter left out, once, at the run's start. Returns 0, or -1. */
int kf_search_resolve_config (kf_search_t *self, int64_t run_id);

/* ---- kf_search_snapshot.c ----------------------------------------------- */

/* What planning needs of the run's archive, read once per planning pass:
 * the elites in cell order, the islands' own archives (by island, then
 * cell) with the candidates they are made of, the recent transitions
 * (oldest first) and the gradients over them. */
typedef struct {
    kf_elite_t *elites;
    size_t n_elites;
    kf_elite_t *members;     /* archive-worthy candidates, with their islands */
    size_t n_members;
    kf_elite_t *pool;        /* the islands' archives, from the members */
    size_t n_pool;
    kf_transition_t *trans;
    size_t n_trans;
    kf_gradient_t grad;
    char fingerprint[17];    /* of the elites' (cell, source) pairs, the
                                islands' included */
    bool loaded;
} kf_search_snapshot_t;

/* Fills SNAP (zeroed, or loaded already: then nothing) for RUN_ID under
 * ST: the grid, the islands' archives when ST has islands, the
 * transitions and gradients when it has gradients, the fingerprint.
 * Returns 0, or -1. */
int kf_search_snapshot_load (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
                             kf_search_snapshot_t *snap);

/* Frees what SNAP holds and zeroes it. */
void kf_search_snapshot_free (kf_search_snapshot_t *snap);

/* Island migration at the start of GENERATION: each island's fittest
 * elite joins the next island's archive (a ring), in the database and in
 * SNAP. Idempotent. Returns 0, or -1. */
int kf_search_migrate (kf_search_t *self, int64_t run_id, const kf_search_settings_t *st,
                       kf_search_snapshot_t *snap, int generation);

/* ---- kf_search_plan.c --------------------------------------------------- */

/* The steady-state step after any candidate of RUN_ID ends (and at the
 * start): plans what may be planned, or ends the run. Returns 0, or -1. */
int kf_search_fill (kf_search_t *self, int64_t run_id);

/* Round 16: a meta round dropped an idea (DROP IDEA) while kernels planned
 * before it still waited to be generated with it. Each search candidate
 * of RUN_ID whose generate job is still queued and whose idea the prompt
 * version the run picks now does not list (kf_search_idea_dropped) is
 * planned again, its prompt and job payload replaced. 0, or -1. */
int kf_search_replan (kf_search_t *self, int64_t run_id);

/* ---- kf_search_archive.c ------------------------------------------------ */

/* Whether RUN_ID's next candidate, of GENERATION (POPULATION a
 * generation's size), waits before it is planned, ELITES (N) the run's
 * grid: kf_select_hold over the previous generation's judged candidates.
 * 1: it waits (some of them are open, so a later fill plans it), 0: it
 * may be planned, -1: a database error. */
int kf_search_hold (kf_search_t *self, int64_t run_id, int generation, int population,
                    const kf_elite_t *elites, size_t n);

/* The coordinates of the point BEST (a sweep's best_config: its params)
 * in CONFIGS, a compile result's table, whose rows carry the coordinates
 * of the code each point built: into OUT, with the row's explanation in
 * *WHY (borrowed). False when BEST is not an object, no row has its
 * params or that row has no valid coordinates. */
bool kf_search_point_coords (json_t *configs, json_t *best, int out[3], const char **why);

/* Round 38: the name of BEST's thread-count parameter (NTHREADS,
 * NUM_THREADS, N_THREADS, THREADS: the tuning prompt's name) where its
 * value is 1, else NULL: such a point runs one thread, so its threads
 * coordinate is 0 (kf_search_point_coords), though the template's code
 * starts threads at other values (it sat in "cooperating"). */
const char *kf_search_point_one_thread (json_t *best);

/* A tuned CAND_ID sits where the code of the point its sweep chose
 * belongs: its coordinates become that point's (RESULT: the evaluation,
 * with best_config; the point's coordinates from the candidate's compile
 * result), not the default point's. Nothing for an untuned candidate, or
 * one whose sweep chose nothing. Returns 0, or -1. */
int kf_search_tuned_coords (kf_search_t *self, int64_t cand_id,
                            const kf_eval_result_t *result);

/* ---- kf_search_candidate.c ---------------------------------------------- */

/* CAND_ID of RUN (its row) was generated (RESULT: the generate job's, or
 * the task's initial kernel): queues its compile, or ends it. */
int kf_search_generated (kf_search_t *self, json_t *run, int64_t cand_id,
                         const kf_generate_result_t *gen);

/* CAND_ID of RUN (0: the run's reference) compiled to RESULT and FRAMES
 * (borrowed): queues its evaluation, or ends it. */
int kf_search_compiled (kf_search_t *self, json_t *run, int64_t cand_id,
                        const kf_compile_result_t *result, zmsg_t *frames);

/* The first evaluation of CAND_ID, evaluate JOB, came back with RESULT:
 * records it and makes the candidate final (unless a full-protocol
 * timing follows, kf_fidelity.c). */
int kf_search_evaluated (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                         const kf_eval_result_t *result);

/* ---- kf_search_profile.c ------------------------------------------------ */

/* CAND_ID of RUN_ID is final and correct: when it holds its archive cell,
 * has no profile yet, and an exec worker of the run's target said it can
 * profile, queues its profile job. Returns 0, or -1. */
int kf_search_profile_elite (kf_search_t *self, int64_t run_id, int64_t cand_id);

/* RUN_ID ended: its profile jobs still queued will help no prompt and
 * fail ("its run ended"). Returns 0, or -1. */
int kf_search_profile_drop (kf_search_t *self, int64_t run_id);

#endif
