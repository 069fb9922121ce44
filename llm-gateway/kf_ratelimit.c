/*  kf_ratelimit.c - per-model GCRA schedules (see kf_ratelimit.h). */
#include "kf_ratelimit.h"
#include "kf_take.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *model;
    double rpm, tpm;             /* configured; 0 = none */
    double req_at;               /* ms: when the next request may go */
    double tok_at;               /* ms: when the token schedule is clear */
} s_limit_t;

struct kf_ratelimit_t {
    s_limit_t *limits;
    int n, max;
    double dflt_rpm, dflt_tpm;   /* from "*" */
};

kf_ratelimit_t *
kf_ratelimit_new (void)
{
    return calloc (1, sizeof (kf_ratelimit_t));
}

void
kf_ratelimit_destroy (kf_ratelimit_t **self_p)
{
    kf_ratelimit_t *self = KF_TAKE (self_p);
    if (self) {
        for (int i = 0; i < self->n; i++)
            free (self->limits[i].model);
        free (self->limits);
        free (self);
    }
}

static s_limit_t *
s_find (kf_ratelimit_t *self, const char *model, bool create)
{
    for (int i = 0; i < self->n; i++)
        if (!strcmp (self->limits[i].model, model))
            return &self->limits[i];
    if (!create)
        return NULL;
    if (self->n == self->max) {
        int grown = self->max ? self->max * 2 : 8;
        s_limit_t *l = realloc (self->limits, sizeof *l * (size_t) grown);
        if (!l)
            return NULL;
        self->limits = l;
        self->max = grown;
    }
    s_limit_t *l = &self->limits[self->n];
    memset (l, 0, sizeof *l);
    l->model = strdup (model);
    if (!l->model)
        return NULL;
    //  A model first seen takes the default limits.
    l->rpm = self->dflt_rpm;
    l->tpm = self->dflt_tpm;
    self->n++;
    return l;
}

int
kf_ratelimit_set (kf_ratelimit_t *self, const char *model, double rpm, double tpm)
{
    if (rpm < 0 || tpm < 0)
        return -1;
    if (!strcmp (model, "*")) {
        self->dflt_rpm = rpm;
        self->dflt_tpm = tpm;
        return 0;
    }
    s_limit_t *l = s_find (self, model, true);
    if (!l)
        return -1;
    l->rpm = rpm;
    l->tpm = tpm;
    return 0;
}

int64_t
kf_ratelimit_acquire (kf_ratelimit_t *self, const char *model, int64_t tokens, int64_t now_ms)
{
    s_limit_t *l = s_find (self, model, true);
    if (!l)
        return 0;    //  out of memory: do not stall the gateway for it
    double now = (double) now_ms;
    double wait = 0;
    if (l->rpm > 0 && l->req_at > now)
        wait = l->req_at - now;
    //  A request larger than a minute's tokens could never fit; it goes
    //  when the schedule is clear rather than never.
    if (l->tpm > 0 && l->tok_at > now && l->tok_at - now > wait)
        wait = l->tok_at - now;
    if (wait > 0)
        return (int64_t) wait + 1;
    if (l->rpm > 0)
        l->req_at = (l->req_at > now ? l->req_at : now) + 60000.0 / l->rpm;
    if (l->tpm > 0)
        l->tok_at = (l->tok_at > now ? l->tok_at : now) + (double) tokens * 60000.0 / l->tpm;
    return 0;
}

void
kf_ratelimit_settle (kf_ratelimit_t *self, const char *model, int64_t estimate, int64_t actual)
{
    s_limit_t *l = s_find (self, model, false);
    if (l && l->tpm > 0)
        l->tok_at += (double) (actual - estimate) * 60000.0 / l->tpm;
}
