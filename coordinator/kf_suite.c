/*  kf_suite.c - suites in the database (kf_suite.h): the fields a SUBMIT
 *  carries to make or join one, and the readers of SUITE and SUITES.
 *
 *  Only bounded, typed fields reach a statement: a name of at most
 *  KF_SUITE_NAME_MAX bytes, skipped entries as {path, reason} strings,
 *  an integer id that must exist. What a suite's figures mean is the
 *  reader's (kfctl/kfctl_suite_stats.c): the database keeps facts only.
 */
#include "kf_suite.h"
#include "kf_str.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* A bad request: *WHY says why, and the check returns 1. */
#define S_BAD(...) (kf_fail (why, __VA_ARGS__), 1)

static bool
s_text_ok (json_t *v, size_t max)
{
    return json_is_string (v) && json_string_length (v) >= 1 && json_string_length (v) <= max
           && strlen (json_string_value (v)) == json_string_length (v);
}

int
kf_suite_check (kf_db_t *db, json_t *body, char **why)
{
    json_t *id = json_object_get (body, "suite_id");
    json_t *suite = json_object_get (body, "suite");
    json_t *problem = json_object_get (body, "problem");
    if (problem && !s_text_ok (problem, KF_SUITE_PROBLEM_MAX))
        return S_BAD ("problem must be a string of 1..%d bytes", KF_SUITE_PROBLEM_MAX);
    if (id && suite)
        return S_BAD ("give suite_id (join a suite) or suite (make one), not both");
    if (suite) {
        if (!json_is_object (suite) || !s_text_ok (json_object_get (suite, "name"),
                                                   KF_SUITE_NAME_MAX))
            return S_BAD ("suite must be an object whose name is a string of 1..%d"
                             " bytes", KF_SUITE_NAME_MAX);
        json_t *skipped = json_object_get (suite, "skipped");
        if (skipped && (!json_is_array (skipped)
                        || json_array_size (skipped) > KF_SUITE_SKIPPED_MAX))
            return S_BAD ("suite.skipped must be an array of at most %d entries",
                             KF_SUITE_SKIPPED_MAX);
        size_t i;
        json_t *s;
        json_array_foreach (skipped, i, s)
            if (!json_is_object (s) || !s_text_ok (json_object_get (s, "path"),
                                                   KF_SUITE_PROBLEM_MAX)
                || !s_text_ok (json_object_get (s, "reason"), KF_SUITE_PROBLEM_MAX))
                return S_BAD ("suite.skipped[%zu] must be {path, reason} with"
                                 " strings of 1..%d bytes", i, KF_SUITE_PROBLEM_MAX);
        return 0;
    }
    if (!id)
        return 0;
    if (!json_is_integer (id) || json_integer_value (id) < 1)
        return S_BAD ("suite_id must be a positive integer");
    char buf[24];
    const char *params[1] = { S_I64 (buf, json_integer_value (id)) };
    bool failed = false;
    json_t *row = kf_db_row (db, "SELECT id FROM suites WHERE id = $1", 1, params, &failed);
    if (failed)
        return -1;
    if (!row)
        return S_BAD ("no suite with id %lld", (long long) json_integer_value (id));
    json_decref (row);
    return 0;
}

int
kf_suite_join (kf_db_t *db, json_t *body, int64_t run_id, int64_t *suite_id)
{
    *suite_id = 0;
    json_t *suite = json_object_get (body, "suite");
    json_t *id = json_object_get (body, "suite_id");
    if (suite) {
        json_t *skipped = json_object_get (suite, "skipped");
        char *text = json_dumps (skipped ? skipped : json_array (), JSON_COMPACT);
        const char *params[2] = { json_string_value (json_object_get (suite, "name")), text };
        json_t *row = text ? kf_db_row (db, "INSERT INTO suites (name, skipped)"
                                        " VALUES ($1, $2::jsonb) RETURNING id", 2, params, NULL)
                           : NULL;
        free (text);
        if (!row)
            return -1;
        *suite_id = json_integer_value (json_object_get (row, "id"));
        json_decref (row);
    }
    else if (json_is_integer (id))
        *suite_id = json_integer_value (id);
    if (!*suite_id)
        return 0;
    char rid[24], sid[24];
    const char *params[3] = { S_I64 (rid, run_id), S_I64 (sid, *suite_id),
                              json_string_value (json_object_get (body, "problem")) };
    return kf_db_exec (db, "UPDATE runs SET suite_id = $2, suite_problem = $3 WHERE id = $1",
                       3, params) == 1 ? 0 : -1;
}

json_t *
kf_suite_show (kf_db_t *db, int64_t suite_id, const char *run_columns, bool *failed)
{
    char buf[24];
    const char *params[1] = { S_I64 (buf, suite_id) };
    *failed = false;
    json_t *suite = kf_db_row (db,
                               "SELECT s.id, s.name, " KF_DB_ISO ("s.created_at")
                               " AS created_at, s.skipped,"
                               " (SELECT count(*) FROM runs r WHERE r.suite_id = s.id) AS runs"
                               " FROM suites s WHERE s.id = $1",
                               1, params, failed);
    if (!suite)
        return NULL;
    char *sql = kf_strdupf ("%s WHERE r.suite_id = $1 ORDER BY r.id", run_columns);
    json_t *runs = sql ? kf_db_query (db, sql, 1, params) : NULL;
    free (sql);
    if (!runs) {
        json_decref (suite);
        *failed = true;
        return NULL;
    }
    return json_pack ("{s:o, s:o}", "suite", suite, "runs", runs);
}

json_t *
kf_suite_list (kf_db_t *db)
{
    return kf_db_query (db,
                        "SELECT s.id, s.name, " KF_DB_ISO ("s.created_at") " AS created_at,"
                        " jsonb_array_length (s.skipped) AS skipped,"
                        " count(r.id) AS runs,"
                        " count(r.id) FILTER (WHERE r.status = 'running') AS running,"
                        " count(r.id) FILTER (WHERE r.status = 'done') AS done,"
                        " count(r.id) FILTER (WHERE r.status = 'failed') AS failed,"
                        " count(r.id) FILTER (WHERE r.status = 'cancelled') AS cancelled,"
                        " count(r.id) FILTER (WHERE r.best_candidate_id IS NOT NULL) AS correct"
                        " FROM suites s LEFT JOIN runs r ON r.suite_id = s.id"
                        " GROUP BY s.id ORDER BY s.id",
                        0, NULL);
}
