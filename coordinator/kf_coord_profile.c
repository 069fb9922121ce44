/*  kf_coord_profile.c - model_profile jobs for kfctl (kf_coord_profile.h).
 *
 *  The job carries the model's text, so the exec host needs nothing of
 *  the user's machine; it runs once (a model that raises will raise
 *  again) under a lease of 15 minutes, past the worker's own 10-minute
 *  limit. Its row is the only state: kfctl polls PROFILE_STATE, so a
 *  coordinator restart in between loses nothing (the job is requeued
 *  like any other).
 */
#include "kf_coord_profile.h"
#include "kf_json.h"
#include "kf_log.h"
#include <stdio.h>
#include <string.h>

#define S_SOURCE_MAX (1 << 20)
#define S_LEASE_MS 900000

/* TARGET (host, cuda, cuda:sm_90, ...) as a backend and an arch (ARCH
 * empty: any). Returns 0, or -1 when it is not a target name. */
static int
s_target (const char *target, char *backend, size_t bsize, char *arch, size_t asize)
{
    static const char *backends[] = { "host", "cuda", "level-zero", "opencl" };
    const char *colon = strchr (target, ':');
    size_t n = colon ? (size_t) (colon - target) : strlen (target);
    arch[0] = 0;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (n == strlen (backends[i]) && !strncmp (target, backends[i], n)) {
            snprintf (backend, bsize, "%s", backends[i]);
            if (!colon)
                return 0;
            if (!colon[1] || strlen (colon + 1) >= asize)
                return -1;
            for (const char *p = colon + 1; *p; p++)
                if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9')
                      || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
                    return -1;
            snprintf (arch, asize, "%s", colon + 1);
            return 0;
        }
    return -1;
}

void
kf_coord_on_profile_model (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    const char *source = json_string_value (json_object_get (msg->body, "source"));
    json_t *top = json_object_get (msg->body, "top");
    json_t *name = json_object_get (msg->body, "name");
    const char *target = json_string_value (json_object_get (msg->body, "target"));
    char backend[16], arch[32];
    if (!source || strlen (source) > S_SOURCE_MAX) {
        kf_coord_reply_error (self, sock, route, "bad-request",
                              "source: the model file's text, at most 1 MiB");
        return;
    }
    if (!json_is_integer (top) || json_integer_value (top) < 1
        || json_integer_value (top) > 50) {
        kf_coord_reply_error (self, sock, route, "bad-request", "top: an integer in 1..50");
        return;
    }
    if (name && !(json_is_string (name) && strlen (json_string_value (name)) <= 200)) {
        kf_coord_reply_error (self, sock, route, "bad-request", "name: a string");
        return;
    }
    if (s_target (target ? target : "host", backend, sizeof backend, arch, sizeof arch)) {
        kf_coord_reply_error (self, sock, route, "bad-request",
                              "target: host, cuda, level-zero or opencl, optionally :ARCH");
        return;
    }
    json_t *payload = json_pack ("{s:s, s:O}", "source", source, "top", top);
    if (name)
        json_object_set (payload, "name", name);
    char *text = payload ? json_dumps (payload, JSON_COMPACT) : NULL;
    json_decref (payload);
    char lease[16];
    snprintf (lease, sizeof lease, "%d", S_LEASE_MS);
    const char *params[4] = { backend, arch[0] ? arch : NULL, text, lease };
    bool failed = false;
    json_t *row = text ? kf_db_row (self->db,
                                    "INSERT INTO jobs (role, kind, backend, arch, payload,"
                                    " max_attempts, lease_ms)"
                                    " VALUES ('execute', 'model_profile', $1, $2, $3::jsonb, 1,"
                                    " $4::int) RETURNING id",
                                    4, params, &failed)
                       : NULL;
    free (text);
    if (!row) {
        kf_coord_reply_error (self, sock, route, "unavailable", "database unavailable");
        return;
    }
    kf_info ("model_profile job %lld queued (target %s)", (long long) kf_jint (row, "id"),
             target ? target : "host");
    kf_coord_send (self, sock, route, "PROFILE_QUEUED",
                   json_pack ("{s:I}", "job_id", (json_int_t) kf_jint (row, "id")));
    json_decref (row);
}

void
kf_coord_on_profile_state (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) kf_msg_int (msg, "job_id", 0));
    const char *params[1] = { id };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "SELECT id AS job_id, state, result, reason, worker FROM jobs"
                             " WHERE id = $1 AND kind = 'model_profile'",
                             1, params, &failed);
    if (!row) {
        kf_coord_reply_missing (self, sock, route, failed, "no model_profile job with that id");
        return;
    }
    kf_coord_send (self, sock, route, "PROFILE_STATE", row);
}
