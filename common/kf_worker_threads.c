/*  kf_worker_threads.c - the worker loop's threads (kf_worker_internal.h):
 *  a detached thread per job, which owns its copy of the job, calls the
 *  handler, encodes the RESULT and pushes it over inproc to the loop
 *  thread; and the idle work's thread, which pushes its answer the same
 *  way with an empty first frame where a job thread puts its job id.
 */
#include "kf_worker_internal.h"
#include "kf_log.h"
#include <pthread.h>
#include <string.h>

typedef struct {
    const kf_worker_config_t *cfg;
    char results_ep[64];
    kf_job_t job;            /* kind, token and payload owned here */
    char *kind;
    char *token;
    zmsg_t *frames;
} s_job_thread_t;

static void *
s_job_main (void *arg)
{
    s_job_thread_t *jt = arg;
    kf_job_result_t res = { 0 };
    jt->cfg->handler (jt->cfg->handler_arg, &jt->job, &res);
    kf_msg_t *msg = kf_worker_result_msg (jt->job.job_id, jt->job.lease, jt->token, &res);
    zsock_t *push = zsock_new_push (jt->results_ep);
    /* The job id travels first, in the routing position of the same
     * message, so the main thread knows which slot is free again; the
     * rest is the encoded RESULT it forwards unchanged. */
    uint64_t id = (uint64_t) jt->job.job_id;
    zframe_t *idf = zframe_new (&id, sizeof id);
    kf_msg_send (&msg, push, idf, NULL);
    zframe_destroy (&idf);
    zsock_destroy (&push);
    free (jt->kind);
    free (jt->token);
    json_decref (jt->job.payload);
    zmsg_destroy (&jt->frames);
    free (jt);
    return NULL;
}

//  Runs the JOB *MSG_P, whose slot is taken, in a thread of its own.
void
kf_worker_start_thread (kf_worker_t *self, kf_msg_t **msg_p)
{
    kf_msg_t *msg = *msg_p;
    int64_t job_id = kf_msg_int (msg, "job_id", 0);
    const char *token = kf_msg_str (msg, "lease_token");
    s_job_thread_t *jt = calloc (1, sizeof *jt);
    jt->cfg = self->cfg;
    memcpy (jt->results_ep, self->results_ep, sizeof jt->results_ep);
    jt->kind = strdup (kf_msg_str (msg, "kind"));
    jt->token = token ? strdup (token) : NULL;
    jt->job.lease_token = jt->token;
    jt->job.job_id = job_id;
    jt->job.lease = kf_msg_int (msg, "lease", 0);
    jt->job.kind = jt->kind;
    jt->job.payload = json_incref (json_object_get (msg->body, "payload"));
    jt->frames = msg->frames;
    jt->job.frames = jt->frames;
    msg->frames = NULL;
    kf_msg_destroy (msg_p);

    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create (&tid, &attr, s_job_main, jt)) {
        kf_error ("cannot start a job thread");
        free (jt->kind);
        free (jt->token);
        json_decref (jt->job.payload);
        zmsg_destroy (&jt->frames);
        free (jt);
        for (int i = 0; i < self->cfg->credits; i++)
            if (self->jobs[i] == job_id) {
                self->jobs[i] = 0;
                self->running--;
                break;
            }
    }
    pthread_attr_destroy (&attr);
}

//  The idle work's thread: its function's answer, pushed to the loop as
//  [empty frame, next ms (int64), capabilities as JSON text or ""].
typedef struct {
    const kf_worker_idle_t *idle;
    char results_ep[64];
} s_idle_thread_t;

static void *
s_idle_main (void *arg)
{
    s_idle_thread_t *it = arg;
    json_t *caps = NULL;
    int64_t next = it->idle->fn (it->idle->arg, &caps);
    char *text = caps ? json_dumps (caps, JSON_COMPACT) : NULL;
    json_decref (caps);
    zsock_t *push = zsock_new_push (it->results_ep);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, NULL, 0);
    zmsg_addmem (msg, &next, sizeof next);
    zmsg_addstr (msg, text ? text : "");
    zmsg_send (&msg, push);
    zsock_destroy (&push);
    free (text);
    free (it);
    return NULL;
}

void
kf_worker_idle_start (kf_worker_t *self)
{
    s_idle_thread_t *it = calloc (1, sizeof *it);
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    if (it) {
        it->idle = self->cfg->idle;
        memcpy (it->results_ep, self->results_ep, sizeof it->results_ep);
    }
    if (!it || pthread_create (&tid, &attr, s_idle_main, it)) {
        kf_error ("cannot start the idle work's thread; it is not tried again");
        free (it);
        self->idle_at = 0;
    }
    else
        self->idle_running = true;
    pthread_attr_destroy (&attr);
}
