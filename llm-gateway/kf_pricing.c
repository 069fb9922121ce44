/*  kf_pricing.c - the price table (see kf_pricing.h). */
#include "kf_pricing.h"
#include "kf_take.h"
#include "kf_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *model;
    double input, output, cached;    /* USD per million tokens */
} s_price_t;

struct kf_pricing_t {
    s_price_t *prices;
    int n, max;
};

kf_pricing_t *
kf_pricing_new (void)
{
    return calloc (1, sizeof (kf_pricing_t));
}

void
kf_pricing_destroy (kf_pricing_t **self_p)
{
    kf_pricing_t *self = KF_TAKE (self_p);
    if (self) {
        for (int i = 0; i < self->n; i++)
            free (self->prices[i].model);
        free (self->prices);
        free (self);
    }
}

int
kf_pricing_set (kf_pricing_t *self, const char *model, double input, double output,
                double cached)
{
    if (input < 0 || output < 0 || cached < 0)
        return -1;
    for (int i = 0; i < self->n; i++)
        if (!strcmp (self->prices[i].model, model)) {
            self->prices[i] = (s_price_t) { self->prices[i].model, input, output, cached };
            return 0;
        }
    if (self->n == self->max) {
        int grown = self->max ? self->max * 2 : 16;
        s_price_t *p = realloc (self->prices, sizeof *p * (size_t) grown);
        if (!p)
            return -1;
        self->prices = p;
        self->max = grown;
    }
    char *name = strdup (model);
    if (!name)
        return -1;
    self->prices[self->n++] = (s_price_t) { name, input, output, cached };
    return 0;
}

kf_pricing_t *
kf_pricing_load (const char *path, char **err)
{
    FILE *f = fopen (path, "r");
    if (!f) {
        kf_fail (err, "%s: cannot open the price table", path);
        return NULL;
    }
    kf_pricing_t *self = kf_pricing_new ();
    char line[512];
    int lineno = 0;
    while (self && fgets (line, sizeof line, f)) {
        lineno++;
        char *hash = strchr (line, '#');
        if (hash)
            *hash = 0;
        char model[256], extra[2];
        double in, out, cached = -1;
        int n = sscanf (line, "%255s %lf %lf %lf %1s", model, &in, &out, &cached, extra);
        if (n <= 0)
            continue;   //  blank or comment
        if (n < 3 || n > 4 || in < 0 || out < 0 || (n == 4 && cached < 0)) {
            kf_fail (err, "%s:%d: expected MODEL INPUT OUTPUT [CACHED] (USD per million "
                          "tokens, not negative)", path, lineno);
            kf_pricing_destroy (&self);
            break;
        }
        if (kf_pricing_set (self, model, in, out, n == 4 ? cached : in)) {
            kf_fail (err, "%s:%d: out of memory", path, lineno);
            kf_pricing_destroy (&self);
        }
    }
    fclose (f);
    return self;
}

double
kf_pricing_cost (const kf_pricing_t *self, const char *model, int64_t input_tokens,
                 int64_t output_tokens, int64_t cached_tokens)
{
    if (!self || !model)
        return -1;
    const s_price_t *hit = NULL, *wild = NULL;
    const char *colon = strchr (model, ':');
    size_t vlen = colon ? (size_t) (colon - model) : strlen (model);
    for (int i = 0; i < self->n && !hit; i++) {
        const char *m = self->prices[i].model;
        if (!strcmp (m, model))
            hit = &self->prices[i];
        else if (!strncmp (m, model, vlen) && !strcmp (m + vlen, ":*"))
            wild = &self->prices[i];
    }
    hit = hit ? hit : wild;
    if (!hit)
        return -1;
    int64_t cached = cached_tokens < input_tokens ? cached_tokens : input_tokens;
    return ((double) (input_tokens - cached) * hit->input + (double) cached * hit->cached
            + (double) output_tokens * hit->output)
           / 1e6;
}
