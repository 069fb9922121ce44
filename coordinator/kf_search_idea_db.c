/*  kf_search_idea_db.c - what the plan reads of one kernel from the
 *  database (kf_search_idea.h): the features its source shows, and
 *  whether its math is scalar.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned
kf_search_idea_features (kf_db_t *db, int64_t id, const char *language)
{
    char buf[24];
    snprintf (buf, sizeof buf, "%lld", (long long) id);
    void *data = NULL;
    size_t size = 0;
    if (kf_db_fetch_blob (db, "SELECT b.data FROM candidates c JOIN blobs b"
                              " ON b.hash = c.source_hash WHERE c.id = $1::bigint",
                          buf, &data, &size) != 0 || !data)
        return 0;
    char *text = strndup (data, size);
    free (data);
    unsigned f = kf_prompt_source_features (text, language);
    free (text);
    return f;
}

//  The report's summary line is KF_COMPILE_VEC_MARK's
//  (compile-worker/kf_compile.h), matched here by its words.
bool
kf_search_idea_scalar (kf_db_t *db, int64_t id, unsigned features)
{
    if ((features >> KF_IDEA_SIMD) & 1u)
        return false;
    char buf[24];
    snprintf (buf, sizeof buf, "%lld", (long long) id);
    const char *params[1] = { buf };
    json_t *rows = kf_db_query (db,
                                "SELECT substring(log from 'vectoriser, -fopt-info-vec, on this"
                                " build\\): ([0-9]+) loops? vectorised') AS loops"
                                " FROM candidates WHERE id = $1::bigint",
                                1, params);
    const char *loops = kf_jstr (json_array_get (rows, 0), "loops");
    bool scalar = *loops && atoi (loops) == 0;
    json_decref (rows);
    return scalar;
}

