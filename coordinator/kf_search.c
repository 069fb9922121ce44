/*  kf_search.c - the search of a run: MAP-Elites over behavioural
 *  coordinates, steady-state.
 *
 *  Every candidate goes generate -> compile -> evaluate. Its parent is
 *  chosen from the run's archive (kf_select.c: uniform, fitness,
 *  curiosity, island), its prompt carries inspirations from other cells
 *  and mutation hints from the gradients over past parent->child moves
 *  (kf_gradient.c), and the evolvable sections of the run's prompt
 *  archive (kf_meta.c). A run keeps up to max_in_flight candidates open:
 *  each one that ends lets the next be planned at once, so no worker
 *  waits for a generation to close; "generation" is only the number of
 *  a candidate divided by the population. After the main phase, tuning
 *  rounds ask for templated versions of the best elites and sweep their
 *  parameters. docs/search.md has the whole of it.
 *
 *  State is only what the database holds: a candidate is final when its
 *  finished_at is set; what to plan next is counted from the candidates
 *  table; rows are inserted with ON CONFLICT DO NOTHING on (run,
 *  generation, slot); every draw is a function of (run seed, candidate
 *  number). Each step runs in the caller's transaction with the job
 *  completion that caused it, so replaying any step after a crash can
 *  neither lose a candidate nor create one twice.
 *
 *  This file is the run's life cycle: its start, the jobs that come back
 *  and the module each goes to, its end. The settings are in
 *  kf_search_config.c, scheduling in kf_search_plan.c, the candidate
 *  pipeline in kf_search_candidate.c, the archive and the run's figures in
 *  kf_search_archive.c; kf_search_int.h is what they share.
 */
#include "kf_search.h"
#include "kf_search_int.h"
#include "kf_json.h"
#include "kf_text.h"
#include "kf_prompt_target.h"
#include "kf_hash.h"
#include "kf_fidelity.h"
#include "kf_log.h"
#include "kf_meta.h"
#include "kf_reference.h"
#include "kf_rename.h"
#include "kf_verify.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

void
kf_search_event (kf_search_t *self, int64_t run_id, const char *event, json_t *fields)
{
    char topic[64];
    snprintf (topic, sizeof topic, "run/%lld/", (long long) run_id);
    json_object_set_new (fields, "run_id", json_integer (run_id));
    json_object_set_new (fields, "event", json_string (event));
    json_array_append_new (self->events,
                           json_pack ("{s:s, s:o}", "topic", topic, "body", fields));
}

/* Splits "cuda:sm_90" into backend and arch (arch may come back empty). */
void
kf_search_split_target (const char *target, char *backend, size_t bsize, char *arch,
                        size_t asize)
{
    const char *colon = strchr (target, ':');
    size_t n = colon ? (size_t) (colon - target) : strlen (target);
    snprintf (backend, bsize, "%.*s", (int) n, target);
    snprintf (arch, asize, "%s", colon ? colon + 1 : "");
}

int
kf_search_store_blob (kf_search_t *self, const void *data, size_t size, char hash[65])
{
    kf_sha256_hex (data, size, hash);
    const char *params[1] = { hash };
    return kf_db_exec_blob (self->db,
                            "INSERT INTO blobs (hash, data) VALUES ($1, $2) "
                            "ON CONFLICT (hash) DO NOTHING",
                            2, params, data, size) < 0 ? -1 : 0;
}

/* Also for kf_reference.c, which runs a run's reference before its search. */
int
kf_search_insert_job (kf_search_t *self, int64_t run_id, int64_t candidate_id,
                      const char *role, const char *kind, const char *backend,
                      const char *arch, json_t *payload, const char *blobs)
{
    int slot = !strcmp (role, "generate") ? 0 : !strcmp (role, "compile") ? 1 : 2;
    char run[24], cand[24], attempts[24], lease[24];
    char *text = json_dumps (payload, JSON_COMPACT);
    json_decref (payload);
    const char *params[10] = { S_I64 (run, run_id),
                               candidate_id ? S_I64 (cand, candidate_id) : NULL,
                               role, kind,
                               backend && *backend ? backend : NULL,
                               arch && *arch ? arch : NULL,
                               text, blobs ? blobs : "{}",
                               S_I64 (attempts, self->max_attempts),
                               S_I64 (lease, self->lease_ms[slot]) };
    long rc = kf_db_exec (self->db,
                          "INSERT INTO jobs (run_id, candidate_id, role, kind, backend,"
                          " arch, payload, blobs, max_attempts, lease_ms)"
                          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                          10, params);
    free (text);
    return rc < 0 ? -1 : 0;
}

json_t *
kf_search_run_row (kf_search_t *self, int64_t run_id)
{
    return kf_db_row_id (self->db,
                         "SELECT r.id, r.status, r.target, r.language, r.generations,"
                         " r.population, r.seed, r.config, r.generation, r.ref_artifact,"
                         " r.best_candidate_id, r.best_speedup, r.input_tokens,"
                         " r.output_tokens, r.cost_usd, coalesce(r.spec, t.spec) AS spec, t.name,"
                         " b.source_hash AS best_source_hash"
                         " FROM runs r JOIN tasks t ON t.id = r.task_id"
                         " LEFT JOIN candidates b ON b.id = r.best_candidate_id"
                         " WHERE r.id = $1",
                         run_id, NULL);
}

int
kf_search_start_run (kf_search_t *self, int64_t run_id)
{
    if (kf_search_resolve_config (self, run_id))
        return -1;
    json_t *run = kf_search_run_row (self, run_id);
    if (!run)
        return -1;
    if (kf_reference_is_pytorch (json_object_get (run, "spec"))) {
        int pytorch_rc = kf_reference_start (self, run);   /* no compile: a reference job */
        json_decref (run);
        return pytorch_rc;
    }
    json_t *ref = json_object_get (json_object_get (run, "spec"), "reference");
    const char *source = kf_jstr (ref, "source");
    const char *language = kf_jstr (ref, "language");
    char hash[65], blobs[80];
    int rc = kf_search_store_blob (self, source, strlen (source), hash);
    snprintf (blobs, sizeof blobs, "{%s}", hash);
    /* The toolchain that builds the reference's language: nvcc for CUDA,
     * clang + llvm-spirv for OpenCL C, cc for C. */
    const char *backend = !strcmp (language, "cuda")     ? "cuda"
                          : !strcmp (language, "opencl") ? "level-zero"
                                                         : "host";
    /* A host reference is built for the exec hosts' instruction sets, as
     * every candidate is (kf_search_candidate.c). */
    char *isa = !strcmp (backend, "host") ? kf_prompt_host_isa (self->db) : NULL;
    if (!strcmp (backend, "host") && !isa)
        rc = -1;
    json_t *target = json_pack ("{s:s}", "backend", backend);
    if (isa && *isa)
        json_object_set_new (target, "arch", json_string (isa));
    free (isa);
    if (rc == 0)
        rc = kf_search_insert_job (self, run_id, 0, "compile", "compile", backend, NULL,
                                   json_pack ("{s:s, s:O, s:s, s:b, s:O*}", "language",
                                              language, "target", target,
                                              "source_hash", hash, "reference", 1, "libraries",
                                              json_object_get (json_object_get (run, "spec"),
                                                               "libraries")),
                                   blobs);
    json_decref (target);
    json_decref (run);
    return rc;
}

int
kf_search_finish_run (kf_search_t *self, int64_t run_id, const char *status,
                      const char *reason)
{
    char id[24];
    const char *params[3] = { S_I64 (id, run_id), status, reason };
    json_t *row = kf_db_row (self->db,
                             "UPDATE runs SET status = $2, reason = $3, finished_at = now()"
                             " WHERE id = $1 AND status = 'running'"
                             " RETURNING best_speedup, first_speedup",
                             3, params, NULL);
    if (row && kf_search_profile_drop (self, run_id)) {
        json_decref (row);
        return -1;
    }
    if (row) {
        kf_search_idea_cache_drop (self->idea_cache, run_id);
        kf_info ("run %lld %s: %s", (long long) run_id, status, reason);
        kf_search_event (self, run_id, "finished",
                 json_pack ("{s:s, s:s, s:O, s:O}", "status", status, "reason",
                            reason, "best_speedup",
                            json_object_get (row, "best_speedup"),
                            "first_speedup", json_object_get (row, "first_speedup")));
    }
    json_decref (row);
    return 0;
}

/* A generate, meta, compile or evaluate JOB of CAND came back with
 * RESULT, TYPED its decodings at the edge: a meta job's goes to
 * kf_meta.c, a generate or compile job's to the candidate pipeline, an
 * evaluate job's is a re-verification, a full-protocol evaluation or a
 * first one. A result that reached here undecoded (no lease book knew its
 * kind) is decoded now, once, with its codec, and a malformed one fails
 * as a job that failed for good. */
static int
s_typed_done (kf_search_t *self, json_t *run, json_t *job, int64_t cand, json_t *result,
              const kf_search_typed_t *typed, zmsg_t *frames)
{
    const char *kind = kf_jstr (job, "kind");
    bool eval = !strcmp (kind, "evaluate"), compile = !strcmp (kind, "compile");
    const kf_field_codec_t *codec = eval      ? &kf_eval_result_codec
                                    : compile ? &kf_compile_result_codec
                                              : &kf_generate_result_codec;
    const void *given = eval      ? (const void *) typed->eval
                        : compile ? (const void *) typed->compile
                                  : (const void *) typed->gen;
    union {
        kf_eval_result_t eval;
        kf_compile_result_t compile;
        kf_generate_result_t gen;
    } local;
    const void *r = given;
    if (!r) {
        char why[300], text[400];
        if (kf_field_decode (codec, result, &local, why, sizeof why)) {
            snprintf (text, sizeof text, "malformed %s result: %s", kind, why);
            return kf_search_job_failed (self, job, text);
        }
        r = &local;
    }
    int rc;
    if (compile)
        rc = kf_search_compiled (self, run, cand, r, frames);
    else if (!eval)
        rc = strcmp (kind, "meta") ? kf_search_generated (self, run, cand, r)
             : kf_meta_job_done (self, job, r) ? -1
             : kf_search_replan (self, kf_jint (run, "id"));
    else if ((rc = kf_verify_job_done (self, run, job, r)) == 1
             && (rc = kf_fidelity_job_done (self, run, job, r)) == 1)
        rc = kf_search_evaluated (self, run, job, cand, r);   /* a first evaluation */
    if (!given)
        kf_field_free (codec, &local);
    return rc;
}

int
kf_search_job_done (kf_search_t *self, json_t *job, json_t *result,
                    const kf_search_typed_t *typed, zmsg_t *frames)
{
    static const kf_search_typed_t none;
    if (!typed)
        typed = &none;
    int64_t run_id = kf_jint (job, "run_id");
    if (!run_id)
        return 0;   /* a job of no run (benchmarks) */
    json_t *run = kf_search_run_row (self, run_id);
    if (!run)
        return -1;
    int rc = 0;
    if (!strcmp (kf_jstr (run, "status"), "running")) {
        int64_t cand = kf_jint (job, "candidate_id");
        const char *kind = kf_jstr (job, "kind");
        if (kf_reference_owns (job))
            rc = kf_reference_job_done (self, run, job, result, typed->ref);
        else if (!strcmp (kind, "meta") || !strcmp (kind, "generate")
                 || !strcmp (kind, "compile") || !strcmp (kind, "evaluate"))
            rc = s_typed_done (self, run, job, cand, result, typed, frames);
    }
    json_decref (run);
    return rc;
}

int
kf_search_job_failed (kf_search_t *self, json_t *job, const char *reason)
{
    int64_t run_id = kf_jint (job, "run_id");
    if (!run_id)
        return 0;
    if (!strcmp (kf_jstr (job, "kind"), "meta"))
        return kf_meta_job_failed (self, job, reason);   /* never fails the run */
    if (!strcmp (kf_jstr (job, "kind"), "profile"))
        return 0;   /* its candidate is final already; its prompt goes without */
    int64_t cand = kf_jint (job, "candidate_id");
    int verify_rc = kf_verify_job_failed (self, job, reason);
    if (verify_rc != 1)
        return verify_rc;   /* a re-verification: its candidate is held for audit */
    if ((verify_rc = kf_fidelity_job_failed (self, job, reason)) != 1)
        return verify_rc;   /* a full-protocol evaluation: held, as above */
    /* The run's reference: a traceback or a compiler's log names the
     * worker's copy ("problem.py", "kernel.c"), not the user's file. */
    char *named = NULL;
    if (!cand) {
        json_t *run = kf_search_run_row (self, run_id);
        named = run ? kf_rename_reference (json_object_get (run, "spec"), reason) : NULL;
        json_decref (run);
    }
    char text[600], prefix[64];
    snprintf (prefix, sizeof prefix, "%s job failed for good: ", kf_jstr (job, "kind"));
    kf_text_head_in (text, sizeof text, prefix, named ? named : reason, 500, "");
    free (named);
    if (!cand)
        return kf_search_finish_run (self, run_id, "failed", text);
    return kf_search_finish_candidate (self, run_id, cand, "failed", 0, text);
}
