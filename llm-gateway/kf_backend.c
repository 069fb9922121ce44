/*  kf_backend.c - what every backend shares: freeing a reply; and the
 *  frame of the backends that answer at once (the offline ones). (What the
 *  HTTP backends share beside it, the request and response plumbing, is
 *  kf_backend_http.c.)
 */
#include "kf_backend.h"
#include "kf_str.h"
#include "kf_take.h"

#include <stdlib.h>
#include <string.h>

void
kf_gen_reply_clear (kf_gen_reply_t *reply)
{
    json_decref (reply->result);
    KF_CLEAR (reply, reply->text, reply->finish_reason, reply->error);
    reply->retry_after_ms = -1;
}

typedef struct {
    kf_backend_t base;           /* first: the backend is this struct */
    kf_gen_answer_fn *answer;
} s_at_once_t;

static int
s_at_once_start (kf_backend_t *self, const kf_gen_request_t *req, kf_gen_done_fn *done,
                 void *arg, char **err)
{
    (void) err;
    kf_gen_reply_t reply = { .retry_after_ms = -1 };
    ((s_at_once_t *) self)->answer (req, &reply);
    done (arg, &reply);
    kf_gen_reply_clear (&reply);
    return 0;
}

static void
s_at_once_destroy (kf_backend_t *self)
{
    free (self);
}

kf_backend_t *
kf_backend_at_once_new (const char *name, kf_gen_answer_fn *answer)
{
    s_at_once_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->base.name = name;
    self->base.start = s_at_once_start;
    self->base.destroy = s_at_once_destroy;
    self->answer = answer;
    return &self->base;
}
