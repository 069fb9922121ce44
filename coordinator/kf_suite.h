/*  kf_suite.h - suites in the database: many problems submitted together
 *  (kfctl suite submit), each a run of its own that names its suite.
 *
 *  A suite is made by the SUBMIT of its first run, in that run's
 *  transaction, so there is never a suite without a run; the runs after
 *  it join by id. The figures of a suite (fast_p, geometric mean) are
 *  computed by the reader from the runs SUITE returns, as `kfctl show`
 *  computes a run's figures from SHOW.
 */
#ifndef KF_SUITE_H
#define KF_SUITE_H

#include "kf_db.h"
#include <jansson.h>
#include <stdint.h>

/* Longest suite name and problem label accepted. */
#define KF_SUITE_NAME_MAX 200
#define KF_SUITE_PROBLEM_MAX 4096
/* Most skipped entries a new suite may carry. */
#define KF_SUITE_SKIPPED_MAX 10000

/* Checks the suite fields of a SUBMIT body (borrowed): none, `suite_id`
 * (an existing suite), or `suite` {name, skipped: [{path, reason}]} (a
 * new one), and `problem`, the path the run came from. Returns 0, 1 with
 * *WHY (caller frees) when they are bad or the suite does not exist, or
 * -1 on a database error. */
int kf_suite_check (kf_db_t *db, json_t *body, char **why);

/* Inside the SUBMIT's transaction, after RUN_ID was inserted: makes the
 * new suite BODY asks for, or joins the one it names, and records the
 * run's problem. *SUITE_ID gets the suite (0: none). Returns 0, or -1. */
int kf_suite_join (kf_db_t *db, json_t *body, int64_t run_id, int64_t *suite_id);

/* A suite with its runs: {suite: {id, name, created_at, skipped, runs},
 * runs: [run, ...]}, the runs read with RUN_COLUMNS (a SELECT over runs r
 * to which a WHERE clause can be added) in id order. Caller's; NULL when
 * there is no such suite (*FAILED false) or on a database error (*FAILED
 * true). */
json_t *kf_suite_show (kf_db_t *db, int64_t suite_id, const char *run_columns, bool *failed);

/* Every suite, oldest first: [{id, name, created_at, runs, running,
 * done, failed, cancelled, correct, skipped}]. Caller's; NULL on a
 * database error. */
json_t *kf_suite_list (kf_db_t *db);

#endif
