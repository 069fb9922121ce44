/*  kf_eval_refdata.c - exported PyTorch data as the reference
 *  (kf_eval_check.h): a reference job's manifest checked against the
 *  task's inputs and outputs and the frame, and turned into where each
 *  set's tensors lie and its numeric scalars.
 */
#include "kf_eval_check.h"
#include "kf_take.h"
#include "kf_task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
s_shape_equal (json_t *a, json_t *b)
{
    if (json_array_size (a) != json_array_size (b))
        return false;
    for (size_t i = 0; i < json_array_size (a); i++)
        if (!json_is_integer (json_array_get (a, i))
            || json_integer_value (json_array_get (a, i)) != json_integer_value (json_array_get (b, i)))
            return false;
    return true;
}

//  Checks manifest entry E against task tensor SPEC and the frame.
static int
s_refdata_entry (json_t *e, json_t *spec, const char *what, int idx, size_t data_size,
                 size_t *off, char *why, size_t why_size)
{
    kf_eval_spec_t s;
    if (kf_eval_spec (&s, spec, why, why_size))
        return -1;
    const char *dt = json_string_value (json_object_get (e, "dtype"));
    char *want = json_dumps (json_object_get (spec, "shape"), JSON_COMPACT);
    char *got = json_dumps (json_object_get (e, "shape"), JSON_COMPACT);
    int rc = 0;
    if (!dt || kf_dtype_from_name (dt) != s.dtype
        || !s_shape_equal (json_object_get (e, "shape"), json_object_get (spec, "shape"))) {
        snprintf (why, why_size,
                  "reference_data: task %s %d ('%s') is %s %s but the data has %s %s ('%s')",
                  what, idx, s.name, kf_dtype_name (s.dtype), want ? want : "?",
                  dt ? dt : "?", got ? got : "?",
                  json_string_value (json_object_get (e, "name")) ? json_string_value (json_object_get (e, "name")) : "?");
        rc = -1;
    }
    free (want);
    free (got);
    if (rc)
        return -1;
    json_t *o = json_object_get (e, "offset"), *b = json_object_get (e, "bytes");
    if (!json_is_integer (o) || !json_is_integer (b) || json_integer_value (o) < 0
        || (size_t) json_integer_value (b) != s.bytes
        || (size_t) json_integer_value (o) > data_size
        || data_size - (size_t) json_integer_value (o) < s.bytes) {
        snprintf (why, why_size, "reference_data: %s %d ('%s'): %zu bytes at offset %lld do not lie in the %zu-byte frame",
                  what, idx, s.name, s.bytes, (long long) json_integer_value (o), data_size);
        return -1;
    }
    *off = (size_t) json_integer_value (o);
    return 0;
}

int
kf_eval_refdata_parse (kf_eval_refdata_t *r, json_t *task, json_t *refdata,
                       size_t data_size, char *why, size_t why_size)
{
    memset (r, 0, sizeof *r);
    json_t *tensors = json_object_get (refdata, "tensors");
    json_t *scalars = json_object_get (refdata, "scalars");
    json_t *sets = json_object_get (refdata, "sets");
    json_t *eager = json_object_get (refdata, "eager_ns");
    json_t *compiled = json_object_get (refdata, "compiled_ns");
    if (!json_is_array (tensors) || !json_is_integer (sets) || json_integer_value (sets) < 1
        || json_integer_value (sets) > 100 || !json_is_number (eager)
        || json_number_value (eager) <= 0 || (scalars && !json_is_array (scalars))
        || (compiled && !json_is_null (compiled) && !json_is_number (compiled))) {
        snprintf (why, why_size, "reference_data: needs tensors (array), sets (1..100), eager_ns (> 0), and optionally scalars (array) and compiled_ns (number or null)");
        return -1;
    }
    r->n_sets = (int) json_integer_value (sets);
    r->eager_ns = json_number_value (eager);
    r->compiled_ns = json_is_number (compiled) && json_number_value (compiled) > 0
                     ? json_number_value (compiled) : -1;
    json_t *ins = json_object_get (task, "inputs"), *outs = json_object_get (task, "outputs");
    r->n_in = (int) json_array_size (ins);
    r->n_out = (int) json_array_size (outs);
    r->in_off = calloc ((size_t) (r->n_sets * r->n_in + 1), sizeof *r->in_off);
    r->out_off = calloc ((size_t) (r->n_sets * r->n_out + 1), sizeof *r->out_off);
    if (!r->in_off || !r->out_off) {
        snprintf (why, why_size, "reference_data: out of memory");
        goto fail;
    }
    for (int set = 0; set < r->n_sets; set++) {
        //  in[]: this set's inputs by index, then params, then buffers;
        //  out[]: this set's outputs by index. The manifest lists each
        //  group in index order already; sort defensively by index.
        json_t *groups[4] = { json_array (), json_array (), json_array (), json_array () };
        size_t i;
        json_t *e;
        json_array_foreach (tensors, i, e) {
            const char *role = json_string_value (json_object_get (e, "role"));
            json_t *es = json_object_get (e, "set");
            bool this_set = json_is_integer (es) && json_integer_value (es) == set;
            int g = !role ? -1
                  : !strcmp (role, "input") && this_set ? 0
                  : !strcmp (role, "param") ? 1
                  : !strcmp (role, "buffer") ? 2
                  : !strcmp (role, "output") && this_set ? 3 : -1;
            if (g < 0)
                continue;
            //  Insert by index.
            json_int_t idx = json_integer_value (json_object_get (e, "index"));
            size_t at = json_array_size (groups[g]);
            while (at > 0 && json_integer_value (json_object_get (json_array_get (groups[g], at - 1), "index")) > idx)
                at--;
            json_array_insert (groups[g], at, e);
        }
        size_t n_in = json_array_size (groups[0]) + json_array_size (groups[1]) + json_array_size (groups[2]);
        int rc = 0;
        if ((int) n_in != r->n_in || (int) json_array_size (groups[3]) != r->n_out) {
            snprintf (why, why_size,
                      "reference_data: set %d has %zu inputs, %zu parameters, %zu buffers and %zu outputs; the task declares %d inputs and %d outputs",
                      set, json_array_size (groups[0]), json_array_size (groups[1]),
                      json_array_size (groups[2]), json_array_size (groups[3]), r->n_in, r->n_out);
            rc = -1;
        }
        int k = 0;
        for (int g = 0; g < 3 && !rc; g++)
            for (size_t j = 0; j < json_array_size (groups[g]) && !rc; j++, k++)
                rc = s_refdata_entry (json_array_get (groups[g], j), json_array_get (ins, (size_t) k),
                                      "input", k, data_size, &r->in_off[set * r->n_in + k],
                                      why, why_size);
        for (size_t j = 0; j < json_array_size (groups[3]) && !rc; j++)
            rc = s_refdata_entry (json_array_get (groups[3], j), json_array_get (outs, j), "output",
                                  (int) j, data_size, &r->out_off[set * r->n_out + (int) j],
                                  why, why_size);
        for (int g = 0; g < 4; g++)
            json_decref (groups[g]);
        if (rc)
            goto fail;
    }

    //  Scalars: numeric `input` ones of set 0 give the names (in<index>),
    //  then every numeric `init` (init<index>); booleans count as 1 / 0.
    size_t n_sc = json_array_size (scalars);
    r->names = calloc (n_sc + 1, sizeof *r->names);
    r->name_ptrs = calloc (n_sc + 1, sizeof *r->name_ptrs);
    r->values = calloc ((size_t) r->n_sets * (n_sc + 1), sizeof *r->values);
    if (!r->names || !r->name_ptrs || !r->values) {
        snprintf (why, why_size, "reference_data: out of memory");
        goto fail;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t i;
        json_t *e;
        json_array_foreach (scalars, i, e) {
            const char *role = json_string_value (json_object_get (e, "role"));
            json_t *v = json_object_get (e, "value");
            json_t *es = json_object_get (e, "set");
            if (!role || !(json_is_number (v) || json_is_boolean (v)))
                continue;
            char name[24];
            if (pass == 0 && !strcmp (role, "input") && json_is_integer (es)
                && json_integer_value (es) == 0)
                snprintf (name, sizeof name, "in%lld", (long long) json_integer_value (json_object_get (e, "index")));
            else if (pass == 1 && !strcmp (role, "init"))
                snprintf (name, sizeof name, "init%lld", (long long) json_integer_value (json_object_get (e, "index")));
            else
                continue;
            snprintf (r->names[r->n_scalars], sizeof r->names[0], "%s", name);
            r->name_ptrs[r->n_scalars] = r->names[r->n_scalars];
            r->n_scalars++;
        }
    }
    for (int set = 0; set < r->n_sets; set++)
        for (int k = 0; k < r->n_scalars; k++) {
            bool init = strncmp (r->names[k], "init", 4) == 0;
            long long idx = atoll (r->names[k] + (init ? 4 : 2));
            double value = NAN;
            size_t i;
            json_t *e;
            json_array_foreach (scalars, i, e) {
                const char *role = json_string_value (json_object_get (e, "role"));
                json_t *es = json_object_get (e, "set");
                if (!role || strcmp (role, init ? "init" : "input") != 0
                    || json_integer_value (json_object_get (e, "index")) != idx
                    || (!init && (!json_is_integer (es) || json_integer_value (es) != set)))
                    continue;
                json_t *v = json_object_get (e, "value");
                value = json_is_boolean (v) ? (json_is_true (v) ? 1 : 0) : json_number_value (v);
            }
            r->values[(size_t) set * (size_t) r->n_scalars + (size_t) k] = value;
        }
    return 0;
fail:
    kf_eval_refdata_free (r);
    return -1;
}

void
kf_eval_refdata_free (kf_eval_refdata_t *r)
{
    KF_CLEAR (r, r->in_off, r->out_off, r->names, r->name_ptrs, r->values);
}
