/*  kf_worker_results.c - what becomes of a job's RESULT in the worker
 *  loop (kf_worker_internal.h): encoded with the lease's token and
 *  scrubbed of secrets, sent when the worker is registered, else kept for
 *  the next WELCOME (oldest dropped past KF_WORKER_HELD_BYTES), and the
 *  jobs held so counted in every HELLO and HEARTBEAT.
 */
#include "kf_worker_internal.h"
#include "kf_secrets.h"
#include "kf_log.h"
#include <string.h>

/* A finished RESULT not sent yet: no registered connection to send on. */
typedef struct {
    int64_t job_id;
    zmsg_t *msg;             /* encoded RESULT (no routing frame) */
    size_t bytes;
} s_held_t;

//  The RESULT for RES, whose contents it takes. Pure, so job threads and
//  the loop thread both use it.
kf_msg_t *
kf_worker_result_msg (int64_t job_id, int64_t lease, const char *token, kf_job_result_t *res)
{
    json_t *body = json_pack ("{s:I, s:I, s:b, s:o}", "job_id", (json_int_t) job_id,
                              "lease", (json_int_t) lease, "ok", res->ok, "result",
                              res->result ? res->result : json_object ());
    res->result = NULL;
    //  The lease token proves the RESULT comes from the lease's holder.
    if (body && token)
        json_object_set_new (body, "lease_token", json_string (token));
    if (body && !res->ok) {
        json_object_set_new (body, "error",
                             json_string (res->error ? res->error : "job failed"));
        if (res->final)
            json_object_set_new (body, "final", json_true ());
    }
    free (res->error);
    res->error = NULL;
    //  Verdict details, compiler logs and errors go to the database and
    //  the next prompt: none carries a secret of this worker's.
    kf_secrets_scrub (body);
    kf_msg_t *msg = kf_msg_new ("RESULT", body);
    if (msg && res->frames) {
        zmsg_destroy (&msg->frames);
        msg->frames = res->frames;
        res->frames = NULL;
    }
    zmsg_destroy (&res->frames);
    return msg;
}

//  The jobs we hold: running, and finished with the RESULT not sent yet
//  (so the coordinator does not hand them back on our HELLO).
json_t *
kf_worker_jobs_array (kf_worker_t *self)
{
    json_t *a = json_array ();
    for (int i = 0; i < self->cfg->credits; i++)
        if (self->jobs[i])
            json_array_append_new (a, json_integer (self->jobs[i]));
    for (s_held_t *h = zlistx_first (self->held); h; h = zlistx_next (self->held))
        json_array_append_new (a, json_integer (h->job_id));
    return a;
}

void
kf_worker_held_free (void **item)
{
    s_held_t *h = *item;
    if (h)
        zmsg_destroy (&h->msg);
    free (h);
    *item = NULL;
}

//  Sends the encoded RESULT *ZMSG_P of JOB_ID now when we are registered,
//  else keeps it for the next WELCOME (oldest dropped past
//  KF_WORKER_HELD_BYTES: their leases lapse on the coordinator's side).
void
kf_worker_send_result (kf_worker_t *self, int64_t job_id, zmsg_t **zmsg_p)
{
    if (self->dealer && self->welcomed && zmsg_send (zmsg_p, self->dealer) == 0)
        return;
    s_held_t *h = calloc (1, sizeof *h);
    if (!h) {
        zmsg_destroy (zmsg_p);
        return;
    }
    h->job_id = job_id;
    h->msg = *zmsg_p;
    h->bytes = zmsg_content_size (h->msg);
    *zmsg_p = NULL;
    zlistx_add_end (self->held, h);
    self->held_bytes += h->bytes;
    while (self->held_bytes > KF_WORKER_HELD_BYTES && zlistx_size (self->held) > 1) {
        s_held_t *old = zlistx_detach (self->held, NULL);
        kf_warn ("dropping the result of job %lld kept for the coordinator (over %u bytes)",
                 (long long) old->job_id, KF_WORKER_HELD_BYTES);
        self->held_bytes -= old->bytes;
        kf_worker_held_free ((void **) &old);
    }
}

//  After a WELCOME: the results kept meanwhile, oldest first.
void
kf_worker_flush_held (kf_worker_t *self)
{
    s_held_t *h;
    while (self->dealer && (h = zlistx_first (self->held))) {
        if (zmsg_send (&h->msg, self->dealer))
            break;                   /* kept for the next WELCOME */
        zlistx_detach_cur (self->held);
        self->held_bytes -= h->bytes;
        kf_info ("sent the result of job %lld kept while not registered",
                 (long long) h->job_id);
        kf_worker_held_free ((void **) &h);
    }
}

int
kf_worker_complete (kf_worker_t *self, int64_t job_id, kf_job_result_t *res)
{
    int slot = -1;
    for (int i = 0; job_id > 0 && i < self->cfg->credits && slot < 0; i++)
        if (self->jobs[i] == job_id)
            slot = i;
    if (slot < 0) {
        free (res->error);
        json_decref (res->result);
        zmsg_destroy (&res->frames);
        memset (res, 0, sizeof *res);
        return -1;
    }
    kf_msg_t *msg = kf_worker_result_msg (job_id, self->leases[slot], self->tokens[slot], res);
    self->jobs[slot] = 0;
    self->leases[slot] = 0;
    free (self->tokens[slot]);
    self->tokens[slot] = NULL;
    self->running--;
    //  Without a registered connection it is kept for the next WELCOME.
    zmsg_t *zmsg = msg ? kf_msg_encode (&msg, NULL, NULL) : NULL;
    if (zmsg)
        kf_worker_send_result (self, job_id, &zmsg);
    return 0;
}
