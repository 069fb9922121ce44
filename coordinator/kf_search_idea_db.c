/*  kf_search_idea_db.c - what the plan reads of one kernel from the
 *  database (kf_search_idea.h): the features its source shows, and
 *  whether its math is scalar; the run's counted tries; and its kernels'
 *  latest times, read for threads and for the arithmetic bound.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_lineage.h"
#include "kf_log.h"
#include "kf_pgarray.h"
#include "kf_prompt_class.h"
#include "kf_prompt_history.h"
#include "kf_prompt_target.h"
#include "kf_prompt_threads.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned
kf_search_idea_features (kf_db_t *db, kf_search_idea_cache_t *cache, int64_t run_id, int64_t id,
                         const char *language)
{
    //  By the source's hash: what its parse found is kept (the source
    //  never changes), and the source is read only the first time.
    json_t *row = kf_db_row_id (db, "SELECT source_hash FROM candidates WHERE id = $1::bigint",
                                id, NULL);
    const char *hash = kf_jstr (row, "source_hash");
    unsigned f = 0;
    void *data = NULL;
    size_t n = 0;
    if (!*hash || kf_search_idea_cache_get (cache, run_id, hash, KF_SEARCH_IDEA_BYTES, &f)
        || kf_db_fetch_blob (db, "SELECT data FROM blobs WHERE hash = $1", hash, &data, &n)
        || !data) {
        free (data);
        json_decref (row);
        return f;
    }
    //  As kf_prompt_source_of reads it.
    char *text = strndup (data, n);
    free (data);
    if (text) {
        f = kf_prompt_source_features (text, language);
        kf_search_idea_cache_put (cache, run_id, hash, KF_SEARCH_IDEA_BYTES, f);
    }
    free (text);
    json_decref (row);
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

//  Whether a kernel's one-core record OC (its evaluation's "one_core")
//  says its threads hardly ran side by side in its full timing: tried
//  (it starts threads) and under KF_PROMPT_SIDE_BY_SIDE CPU-seconds a
//  second of its calls.
static bool
s_apart (json_t *oc)
{
    double side = kf_jnum (oc, "cpu_per_wall", 0);
    return json_is_true (json_object_get (oc, "tried")) && side > 0
           && side < KF_PROMPT_SIDE_BY_SIDE;
}

//  RUN's counted tries, oldest first, as kf_search_idea_record reads
//  them: search children timed in full, against parents timed in full,
//  each with the idea it was handed (stored, else by its place for a
//  candidate planned before ideas were stored). NULL on a database error.
json_t *
kf_search_idea_tries (kf_db_t *db, json_t *run, const kf_prompt_in_t *in)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) kf_jint (run, "id"));
    const char *params[1] = { id };
    json_t *rows = kf_db_query (db,
                                "SELECT c.id, c.parent_id, c.generation, c.slot, c.selection->>'idea' AS idea,"
                                " c.selection->>'with' AS with,"
                                " (c.selection->>'features')::bigint AS features,"
                                " (p.selection->>'features')::bigint AS parent_features,"
                                " (c.selection->>'arith')::int AS arith,"
                                " (p.selection->>'arith')::int AS parent_arith,"
                                " c.speedup, p.speedup AS parent_speedup,"
                                " ec.figures->'candidate' AS tc, ec.figures->'reference' AS tr,"
                                " ep.figures->'candidate' AS ptc, ep.figures->'reference' AS ptr,"
                                " ec.figures->'host_load' AS tl, ep.figures->'host_load' AS pl,"
                                " ec.figures->'one_core' AS oc, ep.figures->'one_core' AS poc"
                                " FROM candidates c JOIN candidates p ON p.id = c.parent_id"
                                " LEFT JOIN LATERAL (SELECT figures FROM evaluations"
                                "  WHERE candidate_id = c.id AND correct"
                                "  ORDER BY id DESC LIMIT 1) ec ON true"
                                " LEFT JOIN LATERAL (SELECT figures FROM evaluations"
                                "  WHERE candidate_id = p.id AND correct"
                                "  ORDER BY id DESC LIMIT 1) ep ON true"
                                " WHERE c.run_id = $1 AND c.phase = 'search'"
                                " AND c.finished_at IS NOT NULL AND c.status = 'correct'"
                                " AND c.fidelity = 'full' AND c.speedup > 0"
                                " AND p.status = 'correct' AND p.fidelity = 'full'"
                                " AND p.speedup > 0 ORDER BY c.id",
                                1, params);
    //  Two timings of one kernel in this run differ by its repeat noise
    //  whatever their samples say (kf_lineage_repeat; round 11: 16%), and
    //  before there are pairs enough for that, by as much as they have
    //  (round 31: kf_lineage_repeat_early).
    double largest = 0;
    long pairs = 0;
    //  Round 39: and the median repeat gap, past which a try within the
    //  noise leans up (kf_search_idea_record).
    double lean = 0;
    double repeat = rows ? kf_lineage_repeat (db, kf_jint (run, "id"), &largest, &pairs, &lean)
                         : 0;
    repeat = kf_lineage_repeat_early (repeat, largest, pairs);
    if (!(repeat > 0))
        lean = 0;
    bool credit_off = json_is_false (json_object_get (json_object_get (run, "config"),
                                                      "idea_credit"));
    size_t i;
    json_t *t;
    json_array_foreach (rows, i, t) {
        if (!json_is_string (json_object_get (t, "idea"))) {
            const char *idea = kf_prompt_idea_at (in, (int) kf_jint (t, "generation"),
                                                  (int) kf_jint (t, "slot"));
            json_object_set_new (t, "idea", idea ? json_string (idea) : json_null ());
        }
        //  What the child's code added to its parent's (s_counts), and
        //  (round 24) whether it counts by what its code changed: the
        //  run's idea_credit, on where a run from before it lacks it.
        json_object_set_new (t, "added", json_integer (kf_prompt_features_added (t)));
        json_object_set_new (t, "by_change", json_boolean (!credit_off));
        double cn = kf_lineage_noise (json_object_get (t, "tc"), json_object_get (t, "tr"));
        double pn = kf_lineage_noise (json_object_get (t, "ptc"), json_object_get (t, "ptr"));
        json_object_set_new (t, "noise", json_real (fmax (sqrt (cn * cn + pn * pn), repeat)));
        if (lean > 0)
            json_object_set_new (t, "lean", json_real (lean));
        //  Round 21: a threaded child's own one-core time, taken in its
        //  evaluation under the load its full timing saw.
        double one = kf_jnum (json_object_get (t, "oc"), "median_ns", 0);
        double full = kf_jnum (json_object_get (t, "tc"), "median_ns", 0);
        if (one > 0 && full > 0) {
            json_object_set_new (t, "one_core_gain", json_real (one / full));
            json_object_set_new (t, "own_noise", json_real (cn));
        }
        //  Round 42: whether the child's threads, or its parent's, hardly
        //  ran side by side in its full timing (kf_lineage.c says so of
        //  the children's lines; the records judge as they do).
        json_object_set_new (t, "apart", json_boolean (s_apart (json_object_get (t, "oc"))));
        json_object_set_new (t, "parent_apart",
                             json_boolean (s_apart (json_object_get (t, "poc"))));
        json_object_del (t, "oc");
        json_object_del (t, "poc");
        json_object_set_new (t, "loaded",
                             json_boolean (kf_prompt_load_busy (json_object_get (t, "tl"))
                                           || kf_prompt_load_busy (json_object_get (t, "pl"))));
    }
    return rows;
}

//  SOURCE's (of HASH) features, parsed in LANGUAGE, into CACHE.
static int
s_keep (kf_search_idea_cache_t *cache, int64_t run_id, const char *hash, const char *source,
        const char *language)
{
    unsigned f = kf_prompt_source_features (source, language);
    return kf_search_idea_cache_put (cache, run_id, hash, KF_SEARCH_IDEA_ESCAPED, f);
}

//  Into CACHE (ESCAPED), the features of ROWS' sources that it lacks:
//  first those the query read (a row's own "source"), then the others'
//  blobs, read here in one query. Each source is parsed once. 0, or -1.
static int
s_parse_new (kf_db_t *db, kf_search_idea_cache_t *cache, int64_t run_id, json_t *rows,
             const char *language)
{
    kf_pgarray_t *missing = kf_pgarray_new ();
    int rc = missing ? 0 : -1;
    unsigned f;
    size_t i;
    json_t *r;
    for (int pass = 0; pass < 2; pass++)
        json_array_foreach (rows, i, r) {
            const char *hash = kf_jstr (r, "source_hash");
            bool read = json_is_string (json_object_get (r, "source"));
            if (rc || read != (pass == 0)
                || kf_search_idea_cache_get (cache, run_id, hash, KF_SEARCH_IDEA_ESCAPED, &f))
                continue;
            rc = read ? s_keep (cache, run_id, hash, kf_jstr (r, "source"), language)
                      : kf_pgarray_add (missing, hash);
        }
    if (rc == 0 && kf_pgarray_size (missing)) {
        const char *params[1] = { kf_pgarray_text (missing) };
        json_t *blobs = kf_db_query (db,
                                     "SELECT hash, encode(data, 'escape') AS source FROM blobs"
                                     " WHERE hash = ANY($1::text[])",
                                     1, params);
        rc = blobs ? 0 : -1;
        json_array_foreach (blobs, i, r)
            if (rc == 0)
                rc = s_keep (cache, run_id, kf_jstr (r, "hash"), kf_jstr (r, "source"),
                             language);
        json_decref (blobs);
    }
    kf_pgarray_destroy (&missing);
    return rc;
}

int
kf_search_idea_timings (kf_db_t *db, kf_search_idea_cache_t *cache, json_t *run,
                        json_t *hardware, const char *language, const kf_elite_t *elites,
                        size_t n, const kf_elite_t *chosen, kf_search_idea_known_t *known,
                        json_t **summary)
{
    *summary = NULL;
    char id[24];
    int64_t run_id = kf_jint (run, "id");
    snprintf (id, sizeof id, "%lld", (long long) run_id);
    double start_us, cores;
    bool host = kf_prompt_threads_host (hardware, &start_us, &cores);
    //  Without the run's cache, one for this plan alone.
    kf_search_idea_cache_t *own = cache ? NULL : kf_search_idea_cache_new ();
    cache = cache ? cache : own;
    long hits, puts0;
    kf_search_idea_cache_counts (cache, &hits, &puts0);
    //  Only the kernels the plan may start from come with their source,
    //  for their arithmetic bound (round 32: and the load and CPU time
    //  their timing saw, as the prompt reckons the bound with: without
    //  them a two-thread kernel that had one CPU read as half its cycles
    //  a vector, and was handed streaming stores that its prompt said its
    //  arithmetic would leave unpaid); the others' threads are their
    //  sources' features, parsed once (kf_search_idea_cache.h).
    kf_pgarray_t *starts = kf_pgarray_new ();
    int rc = starts && cache ? 0 : -1;
    for (size_t e = 0; rc == 0 && e <= n; e++) {
        const kf_elite_t *k = e < n ? &elites[e] : chosen;
        char kid[24];
        if (k) {
            snprintf (kid, sizeof kid, "%lld", (long long) k->candidate_id);
            rc = kf_pgarray_add (starts, kid);
        }
    }
    //  The source as text to look for thread starts in (escape encoding
    //  keeps ASCII as it is; a source need not be valid UTF-8).
    const char *params[2] = { id, rc == 0 ? kf_pgarray_text (starts) : "{}" };
    json_t *rows = rc ? NULL
                   : kf_db_query (db,
                                  "SELECT c.id, c.fidelity, e.candidate_ns, c.source_hash,"
                                  " e.figures->'host_load' AS host_load,"
                                  " e.figures->'one_core' AS one_core,"
                                  " CASE WHEN c.id = ANY($2::bigint[])"
                                  "  THEN encode(b.data, 'escape') END AS source"
                                  " FROM candidates c JOIN blobs b ON b.hash = c.source_hash"
                                  " JOIN LATERAL (SELECT candidate_ns, figures FROM evaluations"
                                  "  WHERE candidate_id = c.id ORDER BY id DESC LIMIT 1) e ON true"
                                  " WHERE c.run_id = $1 AND c.status = 'correct'"
                                  " AND c.finished_at IS NOT NULL AND e.candidate_ns > 0"
                                  " ORDER BY c.id",
                                  2, params);
    kf_pgarray_destroy (&starts);
    known->threads_lose = calloc (n + 1, sizeof *known->threads_lose);
    known->arith = calloc (n + 1, sizeof *known->arith);
    json_t *spec = json_object_get (run, "spec");
    kf_target_kind_t kind = kf_prompt_target_kind (kf_jstr (run, "target"), language);
    if (!rows || !known->threads_lose || !known->arith
        || s_parse_new (db, cache, run_id, rows, language)) {
        json_decref (rows);
        kf_search_idea_cache_destroy (&own);
        return -1;
    }
    int64_t single_id = 0, fast_id = 0;
    double single_ns = 0, fast_ns = 0;
    int threaded_count = 0;
    //  Each single-thread kernel timed in full, by id: a threaded kernel
    //  is set against its own parent where that is one (round 12: against
    //  the fastest single-thread kernel, of another inner loop, "its
    //  threads bought nothing" was a comparison of two designs).
    json_t *one_thread = json_object ();
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r) {
        int64_t cid = kf_jint (r, "id");
        double ns = kf_jnum (r, "candidate_ns", 0);
        unsigned features = 0;
        if (!kf_search_idea_cache_get (cache, run_id, kf_jstr (r, "source_hash"),
                                       KF_SEARCH_IDEA_ESCAPED, &features))
            rc = -1;    //  s_parse_new read every source: no blob for one
        bool threaded = (features >> KF_IDEA_THREADS) & 1u;
        bool lose = host && kf_prompt_threads_lose (start_us, cores, ns, threaded);
        //  Read only for the kernels the plan may start from: the
        //  reading parses the source again.
        bool pooled = chosen && chosen->candidate_id == cid;
        for (size_t e = 0; e < n && !pooled; e++)
            pooled = elites[e].candidate_id == cid;
        double cycles, budget;
        bool arith = pooled
                     && kf_search_idea_arith_bound (r, spec, hardware, kind, &cycles, &budget);
        for (size_t e = 0; e < n; e++)
            if (elites[e].candidate_id == cid) {
                known->threads_lose[e] = lose;
                known->arith[e] = arith;
            }
        if (chosen && chosen->candidate_id == cid) {
            known->chosen_threads_lose = lose;
            known->chosen_arith = arith;
        }
        if (strcmp (kf_jstr (r, "fidelity"), "full"))
            continue;
        if (threaded) {
            threaded_count++;
            if (!fast_id || ns < fast_ns) {
                fast_id = cid;
                fast_ns = ns;
            }
        }
        else {
            char key[24];
            snprintf (key, sizeof key, "%lld", (long long) cid);
            json_object_set_new (one_thread, key, json_real (ns));
            if (!single_id || ns < single_ns) {
                single_id = cid;
                single_ns = ns;
            }
        }
    }
    long puts;
    kf_search_idea_cache_counts (cache, &hits, &puts);
    kf_debug ("run %lld: timings of %zu kernels, %ld sources parsed",
              (long long) run_id, json_array_size (rows), puts - puts0);
    json_decref (rows);
    kf_search_idea_cache_destroy (&own);
    if (rc) {
        json_decref (one_thread);
        return -1;
    }
    *summary = json_pack ("{s:i, s:o}", "threaded", threaded_count, "one_thread", one_thread);
    if (single_id)
        json_object_update_new (*summary, json_pack ("{s:I, s:f}", "single_id",
                                                     (json_int_t) single_id, "single_ns",
                                                     single_ns));
    if (fast_id)
        json_object_update_new (*summary, json_pack ("{s:I, s:f}", "threaded_id",
                                                     (json_int_t) fast_id, "threaded_ns",
                                                     fast_ns));
    return 0;
}

void
kf_search_idea_pool (kf_db_t *db, kf_search_idea_cache_t *cache, int64_t run_id,
                     const char *language, const kf_elite_t *elites, size_t n, int island,
                     const kf_elite_t *chosen, unsigned own, kf_search_idea_known_t *known,
                     unsigned *features)
{
    for (size_t k = 0; k < n; k++) {
        bool other = island >= 0 && elites[k].island != island;
        bool same = elites[k].candidate_id == chosen->candidate_id;
        int64_t id = elites[k].candidate_id;
        features[k] = other  ? ~0u
                      : same ? own
                             : kf_search_idea_features (db, cache, run_id, id, language);
        if (known->scalar && !other)
            known->scalar[k] = same ? known->chosen_scalar
                                    : kf_search_idea_scalar (db, id, features[k]);
    }
}
