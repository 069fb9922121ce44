/*  kf_search_profile.c - a profile of every new elite, for the prompts of
 *  its children.
 *
 *  Timing says how fast a kernel is; a profile says why (exec-worker/
 *  kf_profile.c: Nsight Compute on CUDA, perf stat's hardware counters on
 *  the host). A candidate that takes its archive cell is the one the
 *  search will breed from, so it gets one profile job, which kf_prompt.c
 *  shows under the kernel in every prompt built after it came back.
 *
 *  Only where a profiler can run: the job is made only when an exec
 *  worker of the run's backend (and arch) said "profile": true in its
 *  HELLO, and the dispatcher gives it to no other worker
 *  (kf_coord_dispatch.c). Where none did, no job is made and the prompt
 *  says nothing of a profile. A profile that fails changes nothing: the
 *  candidate is final already, and its prompt shows its timing alone.
 */
#include "kf_search_int.h"
#include "kf_json.h"
#include "kf_str.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* The blobs of a profile job: the artifact the evaluation counted (for a
 * swept candidate, its best config's frame) and the reference after it
 * when the evaluation had one. NULL when the best config is not among
 * the frames. Caller frees. */
static char *
s_blobs (kf_search_t *self, json_t *row)
{
    json_t *configs = json_object_get (json_object_get (row, "payload"), "configs");
    json_t *best = json_object_get (row, "best_config");
    if (!json_array_size (configs))
        return strdup (kf_jstr (row, "blobs"));
    size_t i;
    json_t *c;
    json_array_foreach (configs, i, c) {
        if (!json_is_object (best) || !json_equal (json_object_get (c, "params"), best))
            continue;
        char job[24], frame[24];
        const char *p[2] = { S_I64 (job, kf_jint (row, "job_id")),
                             S_I64 (frame, kf_jint (c, "frame")) };
        json_t *hash = kf_db_row (self->db, "SELECT blobs[$2::int + 1] AS h FROM jobs"
                                            " WHERE id = $1", 2, p, NULL);
        const char *ref = kf_jstr (row, "ref_artifact");
        char *blobs = *kf_jstr (hash, "h")
                          ? kf_strdupf ("{%s%s%s}", kf_jstr (hash, "h"), *ref ? "," : "", ref)
                          : NULL;
        json_decref (hash);
        return blobs;
    }
    return NULL;
}

int
kf_search_profile_elite (kf_search_t *self, int64_t run_id, int64_t cand_id)
{
    char run[24], cand[24];
    const char *p[2] = { S_I64 (cand, cand_id), S_I64 (run, run_id) };
    bool failed = false;
    /* The evaluation that made it correct (its job's payload and frames),
     * when it holds its cell, has no profile yet, and a worker that could
     * profile it has said so. */
    json_t *row = kf_db_row (
        self->db,
        "SELECT e.job_id, e.figures->'best_config' AS best_config, j.payload,"
        " j.blobs::text AS blobs, j.backend, j.arch, r.ref_artifact"
        " FROM candidates c JOIN runs r ON r.id = c.run_id"
        " JOIN LATERAL (SELECT job_id, figures FROM evaluations WHERE candidate_id = c.id"
        "  AND correct ORDER BY id DESC LIMIT 1) e ON true"
        " JOIN jobs j ON j.id = e.job_id"
        " WHERE c.id = $1 AND r.id = $2"
        " AND EXISTS (SELECT 1 FROM archive_cells a WHERE a.run_id = r.id"
        "  AND a.candidate_id = c.id)"
        " AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.candidate_id = c.id"
        "  AND o.kind = 'profile')"
        " AND EXISTS (SELECT 1 FROM workers w WHERE w.role = 'execute'"
        "  AND w.capabilities->'profile' = 'true'::jsonb"
        "  AND (j.backend IS NULL OR w.capabilities->'backends' @> jsonb_build_array(j.backend))"
        "  AND (j.arch IS NULL OR w.capabilities->>'arch' = j.arch))",
        2, p, &failed);
    if (!row)
        return failed ? -1 : 0;
    char *blobs = s_blobs (self, row);
    json_t *from = json_object_get (row, "payload");
    /* As for an evaluation: the task, the seed, a PyTorch run's exported
     * data; the profiler chooses its own timing. */
    json_t *payload = json_pack ("{s:O, s:O*}", "task", json_object_get (from, "task"), "seed",
                                 json_object_get (from, "seed"));
    if (json_object_get (from, "reference_data"))
        json_object_set (payload, "reference_data", json_object_get (from, "reference_data"));
    int rc = blobs ? kf_search_insert_job (self, run_id, cand_id, "execute", "profile",
                                           kf_jstr (row, "backend"), kf_jstr (row, "arch"),
                                           payload, blobs)
                   : (json_decref (payload), 0);
    free (blobs);
    json_decref (row);
    return rc;
}

int
kf_search_profile_drop (kf_search_t *self, int64_t run_id)
{
    return kf_db_exec_id (self->db,
                          "UPDATE jobs SET state = 'failed', reason = 'its run ended',"
                          " updated_at = now()"
                          " WHERE run_id = $1 AND kind = 'profile' AND state = 'queued'",
                          run_id) < 0 ? -1 : 0;
}
