/*  kf_eval_degen.c - a native reference's degenerate outputs
 *  (kf_eval_check.h): the rules the PyTorch runner applies
 *  (docs/pytorch-references.md), folded set by set over a reference probe
 *  and turned into the reasons a task is refused.
 */
#include "kf_eval_check.h"
#include "kf_task.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


uint64_t
kf_eval_hash (const void *p, size_t n, uint64_t h)
{
    //  FNV-1a over bytes: a fingerprint to tell sets apart, not security.
    const unsigned char *b = p;
    if (!h)
        h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

void
kf_eval_degen_init (kf_eval_degen_t *d, int n_out)
{
    memset (d, 0, sizeof *d);
    d->n_out = n_out < KF_EVAL_MAX_OUT ? n_out : KF_EVAL_MAX_OUT;
    for (int o = 0; o < d->n_out; o++)
        d->out[o].all_constant = true;
}

void
kf_eval_degen_inputs (kf_eval_degen_t *d, uint64_t inputs_hash)
{
    if (d->sets == 0)
        d->in_hash = inputs_hash;
    else if (inputs_hash != d->in_hash)
        d->in_differs = true;
}

void
kf_eval_degen_output (kf_eval_degen_t *d, int o, const kf_eval_spec_t *s,
                      const void *data, double atol)
{
    if (o >= d->n_out)
        return;
    size_t esize = kf_dtype_size (s->dtype);
    uint64_t h = kf_eval_hash (data, s->bytes, 0);
    if (d->sets == 0)
        d->out[o].hash = h;
    else if (h != d->out[o].hash)
        d->out[o].differs = true;
    d->out[o].name = s->name;
    d->out[o].atol = atol;
    //  Constant: more than one element, all bitwise equal to the first.
    if (s->numel <= 1)
        d->out[o].all_constant = false;
    for (size_t i = 1; i < s->numel && d->out[o].all_constant; i++)
        if (memcmp ((const char *) data + i * esize, data, esize) != 0)
            d->out[o].all_constant = false;
    if (s->numel)
        d->out[o].value = kf_elem_get (s->dtype, data, 0);
    for (size_t i = 0; i < s->numel; i++) {
        double v = kf_elem_get (s->dtype, data, i);
        if (isfinite (v)) {
            d->out[o].any_finite = true;
            if (fabs (v) > d->out[o].max_mag)
                d->out[o].max_mag = fabs (v);
        }
    }
}

void
kf_eval_degen_end_set (kf_eval_degen_t *d)
{
    d->sets++;
}

json_t *
kf_eval_degen_json (const kf_eval_degen_t *d)
{
    json_t *reasons = json_array ();
    char line[256];
    for (int o = 0; o < d->n_out && d->sets > 0; o++) {
        const char *name = d->out[o].name ? d->out[o].name : "?";
        if (!d->out[o].any_finite) {
            snprintf (line, sizeof line, "output %d ('%s'): no finite element in any set", o, name);
            json_array_append_new (reasons, json_string (line));
            continue;
        }
        if (d->out[o].all_constant) {
            snprintf (line, sizeof line, "output %d ('%s'): constant (every element is %g)", o,
                      name, d->out[o].value);
            json_array_append_new (reasons, json_string (line));
        }
        if (d->sets >= 2 && !d->out[o].differs) {
            snprintf (line, sizeof line, "output %d ('%s'): the same in every input set", o, name);
            json_array_append_new (reasons, json_string (line));
        }
        if (d->out[o].max_mag <= d->out[o].atol) {
            snprintf (line, sizeof line,
                      "output %d ('%s'): every element is within the absolute bound %g of 0", o,
                      name, d->out[o].atol);
            json_array_append_new (reasons, json_string (line));
        }
    }
    if (d->sets >= 2 && !d->in_differs)
        json_array_append_new (reasons, json_string ("inputs: identical in every set"));
    return reasons;
}
