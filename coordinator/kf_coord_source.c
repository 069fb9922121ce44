/*  kf_coord_source.c - the SOURCE client request (kf_coord_source.h).
 *
 *  BEST and EXPORT give the kernels that worked; a user finding out why
 *  one did not needs the same for any candidate: what it was, what the
 *  compiler said about it, and how its verdict reads in full. One row,
 *  one blob, one round trip.
 */
#include "kf_coord_source.h"
#include "kf_json.h"
#include "kf_rename.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

void
kf_coord_on_source (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    json_t *given = json_object_get (msg->body, "candidate_id");
    if (!json_is_integer (given)) {
        kf_coord_reply_error (self, sock, route, "bad-request",
                              "candidate_id: must be an integer");
        return;
    }
    char rid[24], cid[24];
    int64_t run_id = kf_msg_int (msg, "run_id", 0);
    const char *params[2] = { S_I64 (cid, json_integer_value (given)), S_I64 (rid, run_id) };
    bool failed = false;
    /* The compiler's log: the last compile job's, a tuned build's first
     * point that has one when the job's own is empty. */
    json_t *cand = kf_db_row (
        self->db,
        "SELECT c.id, c.run_id, c.generation, c.slot, c.parent_id, c.status, c.language,"
        " c.speedup, c.verdict_detail, c.source_hash, c.model,"
        " e.candidate_ns, e.reference_ns, e.figures->'best_config' AS best_config,"
        " coalesce(nullif(j.result->>'log', ''),"
        "  (SELECT x->>'log' FROM jsonb_array_elements(CASE WHEN jsonb_typeof("
        "   j.result->'configs') = 'array' THEN j.result->'configs' ELSE '[]' END) x"
        "   WHERE coalesce(x->>'log', '') <> '' LIMIT 1), '') AS compile_log,"
        /* The user's initial kernel: its log names the user's file. */
        " CASE WHEN c.generator = 'initial' THEN coalesce(r.spec, t.spec)->'initial' END"
        "  - 'source' AS initial"
        " FROM candidates c JOIN runs r ON r.id = c.run_id JOIN tasks t ON t.id = r.task_id"
        " LEFT JOIN LATERAL (SELECT result FROM jobs WHERE candidate_id = c.id"
        "  AND kind = 'compile' AND result IS NOT NULL ORDER BY id DESC LIMIT 1) j ON true"
        " LEFT JOIN LATERAL (SELECT candidate_ns, reference_ns, figures FROM evaluations"
        "  WHERE candidate_id = c.id ORDER BY correct DESC, id DESC LIMIT 1) e ON true"
        " WHERE c.id = $1 AND c.run_id = $2",
        2, params, &failed);
    if (!cand) {
        char why[128];
        snprintf (why, sizeof why, "run %lld has no candidate %lld", (long long) run_id,
                  (long long) json_integer_value (given));
        kf_coord_reply_missing (self, sock, route, failed, why);
        return;
    }
    void *data = NULL;
    size_t size = 0;
    const char *hash = kf_jstr (cand, "source_hash");
    if (*hash)
        kf_db_fetch_blob (self->db, "SELECT data FROM blobs WHERE hash = $1", hash, &data,
                          &size);
    /* The compile worker built the user's initial kernel as "kernel.c";
     * the user knows it by the task's initial.path (kf_rename.h). */
    json_t *log = json_incref (json_object_get (cand, "compile_log"));
    json_t *initial = json_object_get (cand, "initial");
    if (json_is_string (log) && *kf_jstr (initial, "path")) {
        char *named = kf_rename_file (json_string_value (log),
                                      kf_rename_worker_name (kf_jstr (initial, "language")),
                                      kf_jstr (initial, "path"));
        if (named) {
            json_decref (log);
            log = json_string (named);
            free (named);
        }
    }
    json_object_del (cand, "initial");
    json_object_del (cand, "compile_log");
    json_object_del (cand, "source_hash");
    kf_msg_t *reply = kf_msg_new ("SOURCE", json_pack ("{s:I, s:o, s:o}", "run_id",
                                                       (json_int_t) run_id, "candidate", cand,
                                                       "compile_log",
                                                       log ? log : json_string ("")));
    if (reply && kf_msg_add_frame (reply, data ? data : "", data ? size : 0) == 0
        && kf_msg_send (&reply, sock, route, NULL) == 0)
        self->counters[KF_COORD_SENT]++;
    kf_msg_destroy (&reply);
    free (data);
}
