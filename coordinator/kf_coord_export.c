/*  kf_coord_export.c - the EXPORT client request (kf_coord_export.h).
 *
 *  `kfctl export` turns one correct candidate into something a user can
 *  build and call: it needs the source, the task the candidate was judged
 *  on (for a PyTorch run the derived one, runs.spec), the tuning point
 *  whose figures counted (a tuned source built with its defaults is not
 *  the kernel that was measured) and, for a PyTorch run, which of the
 *  kernel's inputs are forward's arguments and which the module's
 *  parameters and buffers (the reference's manifest, set 0 only: the
 *  other sets repeat the same names). Everything is read in one place
 *  here so the command needs one round trip.
 */
#include "kf_coord_export.h"
#include "kf_json.h"
#include <stdio.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* Why a candidate row cannot be exported, or NULL when it can. */
static const char *
s_refusal (json_t *cand, char *why, size_t size)
{
    long long id = (long long) kf_jint (cand, "id");
    const char *status = kf_jstr (cand, "status");
    if (strcmp (status, "correct")) {
        snprintf (why, size, "candidate %lld is not correct (%s%s%.300s)", id, status,
                  *kf_jstr (cand, "verdict_detail") ? ": " : "",
                  kf_jstr (cand, "verdict_detail"));
        return why;
    }
    if (!strcmp (kf_jstr (cand, "audit_verdict"), "rejected")) {
        snprintf (why, size, "candidate %lld was rejected at audit", id);
        return why;
    }
    if (*kf_jstr (cand, "audit_reason") && !*kf_jstr (cand, "audit_verdict")) {
        snprintf (why, size, "candidate %lld is held for audit (%.300s); "
                  "'kfctl audit %lld accept' first", id, kf_jstr (cand, "audit_reason"), id);
        return why;
    }
    if (!strcmp (kf_jstr (cand, "verify_state"), "pending")) {
        snprintf (why, size, "candidate %lld waits for its re-verification", id);
        return why;
    }
    return NULL;
}

void
kf_coord_on_export (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    char rid[24], cid[24], why[512];
    int64_t run_id = kf_msg_int (msg, "run_id", 0);
    json_t *given = json_object_get (msg->body, "candidate_id");
    if (given && !json_is_integer (given)) {
        kf_coord_reply_error (self, sock, route, "bad-request",
                              "candidate_id: must be an integer");
        return;
    }
    const char *rp[1] = { S_I64 (rid, run_id) };
    bool failed = false;
    json_t *run = kf_db_row (
        self->db,
        "SELECT r.id, r.status, r.reason, r.target, r.language, r.best_candidate_id,"
        " coalesce(r.spec, t.spec) AS task,"
        " (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements("
        "   coalesce(r.ref_data->'tensors', '[]')) x"
        "   WHERE x->'set' = 'null'::jsonb OR x->>'set' = '0') AS tensors,"
        " (SELECT coalesce(jsonb_agg(x), '[]') FROM jsonb_array_elements("
        "   coalesce(r.ref_data->'scalars', '[]')) x"
        "   WHERE x->'set' = 'null'::jsonb OR x->>'set' = '0') AS scalars"
        " FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.id = $1",
        1, rp, &failed);
    if (!run) {
        kf_coord_reply_missing (self, sock, route, failed, "no run with that id");
        return;
    }
    int64_t cand_id = given ? json_integer_value (given) : kf_jint (run, "best_candidate_id");
    if (!given && !json_is_integer (json_object_get (run, "best_candidate_id"))) {
        const char *status = kf_jstr (run, "status");
        if (!strcmp (status, "running"))
            snprintf (why, sizeof why, "run %lld has no correct candidate yet",
                      (long long) run_id);
        else
            snprintf (why, sizeof why, "run %lld ended %s with no correct candidate%s%.300s",
                      (long long) run_id, status, *kf_jstr (run, "reason") ? ": " : "",
                      kf_jstr (run, "reason"));
        kf_coord_reply_error (self, sock, route, "bad-request", why);
        json_decref (run);
        return;
    }
    const char *cp[2] = { S_I64 (cid, cand_id), rid };
    json_t *cand = kf_db_row (
        self->db,
        "SELECT c.id, c.generation, c.slot, c.parent_id, c.status, c.language, c.speedup,"
        " c.verdict_detail, c.audit_reason, c.audit_verdict, c.verify_state, c.source_hash,"
        " (SELECT e.figures->'best_config' FROM evaluations e WHERE e.candidate_id = c.id"
        "  AND jsonb_typeof(e.figures->'best_config') = 'object'"
        "  ORDER BY e.correct DESC, e.id DESC LIMIT 1) AS best_config,"
        " (SELECT e.candidate_ns FROM evaluations e WHERE e.candidate_id = c.id"
        "  AND e.correct ORDER BY e.id DESC LIMIT 1) AS median_ns"
        " FROM candidates c WHERE c.id = $1 AND c.run_id = $2",
        2, cp, &failed);
    if (!cand) {
        snprintf (why, sizeof why, "run %lld has no candidate %lld", (long long) run_id,
                  (long long) cand_id);
        kf_coord_reply_missing (self, sock, route, failed, why);
        json_decref (run);
        return;
    }
    if (s_refusal (cand, why, sizeof why)) {
        kf_coord_reply_error (self, sock, route, "bad-request", why);
        json_decref (cand);
        json_decref (run);
        return;
    }
    void *data = NULL;
    size_t size = 0;
    if (kf_db_fetch_blob (self->db, "SELECT data FROM blobs WHERE hash = $1",
                          kf_jstr (cand, "source_hash"), &data, &size) != 0
        || !data) {
        free (data);
        kf_coord_reply_error (self, sock, route, "unavailable",
                              "the candidate's source could not be read");
        json_decref (cand);
        json_decref (run);
        return;
    }
    json_t *body = json_pack ("{s:I, s:O, s:s, s:s, s:o, s:o, s:o, s:o}",
                              "run_id", (json_int_t) run_id, "candidate", cand,
                              "target", kf_jstr (run, "target"),
                              "language", kf_jstr (cand, "language"),
                              "task", kf_jref (run, "task"),
                              "tensors", kf_jref (run, "tensors"),
                              "scalars", kf_jref (run, "scalars"),
                              "best_config", kf_jref (cand, "best_config"));
    json_object_del (json_object_get (body, "candidate"), "best_config");
    json_object_del (json_object_get (body, "candidate"), "source_hash");
    json_decref (cand);
    json_decref (run);
    kf_msg_t *reply = body ? kf_msg_new ("EXPORTED", body) : NULL;
    if (reply && kf_msg_add_frame (reply, data, size) == 0
        && kf_msg_send (&reply, sock, route, NULL) == 0)
        self->counters[KF_COORD_SENT]++;
    kf_msg_destroy (&reply);
    free (data);
}
