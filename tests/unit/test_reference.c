/*  test_reference.c - the task a PyTorch run's candidates see, derived by
 *  kf_reference_derive from a reference job's result: inputs in argument
 *  order, then parameters, then buffers; outputs; numeric init and input
 *  values as scalars; names that are identifiers and unique; a problem no
 *  kernel can implement refused with the reason. First on manifests
 *  written here (so each rule is pinned down), then on the real reference
 *  job of examples/pytorch/layernorm.py (parameters and a buffer), run by
 *  the exec worker's runner with the interpreter it would find.
 */
#include "../../coordinator/kf_reference.h"
#include "../../exec-worker/kf_torch_ref.h"
#include "../kf_test.h"
#include "kf_subproc.h"
#include "kf_task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The task kfctl builds from a problem file, validated. */
static json_t *
s_task (const char *op)
{
    json_t *task = json_pack ("{s:s, s:s, s:s, s:{s:s, s:s}}", "name", "t", "op", op,
                              "description", "a problem", "reference", "language",
                              "pytorch", "source", "class Model: pass\n");
    char *err = NULL;
    CHECK (kf_task_validate (task, &err) == 0);
    if (err)
        printf ("    %s\n", err);
    free (err);
    return task;
}

static json_t *
s_entry (const char *role, int set, int index, const char *name, const char *dtype,
         json_t *shape)
{
    return json_pack ("{s:s, s:o, s:i, s:s, s:s, s:o}", "role", role, "set",
                      set < 0 ? json_null () : json_integer (set), "index", index,
                      "name", name, "dtype", dtype, "shape", shape);
}

static const char *
s_name (json_t *spec, const char *list, size_t i)
{
    const char *n = json_string_value (
        json_object_get (json_array_get (json_object_get (spec, list), i), "name"));
    return n ? n : "(none)";
}

/* A manifest with two sets, out of order, dotted and clashing names. */
static void
s_rules (void)
{
    json_t *tensors = json_array ();
    /* two parameters (the second named like an input), a buffer with a
     * leading digit, then per set: input 2, input 0 (listed out of order
     * on purpose), output 0 */
    json_array_append_new (tensors, s_entry ("param", -1, 0, "norm.weight", "f32", json_pack ("[i]", 8)));
    json_array_append_new (tensors, s_entry ("param", -1, 1, "in0", "f32", json_pack ("[i]", 8)));
    json_array_append_new (tensors, s_entry ("buffer", -1, 0, "0.running_mean", "f64", json_pack ("[]")));
    for (int set = 0; set < 2; set++) {
        json_array_append_new (tensors, s_entry ("input", set, 2, "in2", "i64", json_pack ("[i]", 4)));
        json_array_append_new (tensors, s_entry ("input", set, 0, "in0", "f32",
                                                 json_pack ("[i, i]", 4 + set, 8)));
        json_array_append_new (tensors, s_entry ("output", set, 0, "out0", "f16",
                                                 json_pack ("[i, i]", 4 + set, 8)));
    }
    json_t *scalars = json_pack ("[{s:s, s:n, s:i, s:s, s:i}, {s:s, s:n, s:i, s:s, s:s},"
                                 " {s:s, s:i, s:i, s:s, s:f}, {s:s, s:i, s:i, s:s, s:f},"
                                 " {s:s, s:i, s:i, s:s, s:b}]",
                                 "role", "init", "set", "index", 0, "name", "init0", "value", 768,
                                 "role", "init", "set", "index", 1, "name", "init1", "value", "relu",
                                 "role", "input", "set", 0, "index", 1, "name", "in1", "value", 0.5,
                                 "role", "input", "set", 1, "index", 1, "name", "in1", "value", 9.0,
                                 "role", "input", "set", 0, "index", 3, "name", "in3", "value", 1);
    json_t *result = json_pack ("{s:o, s:o, s:i}", "tensors", tensors, "scalars", scalars,
                                "sets", 2);
    json_t *task = s_task ("pytorch");
    char *why = NULL;
    json_t *spec = kf_reference_derive (task, result, &why);
    CHECK (spec != NULL);
    if (!spec) {
        printf ("    derive: %s\n", why ? why : "?");
        free (why);
        json_decref (task);
        json_decref (result);
        return;
    }
    json_t *ins = json_object_get (spec, "inputs");
    CHECK (json_array_size (ins) == 5);
    /* arguments in index order, then parameters, then the buffer */
    CHECK (!strcmp (s_name (spec, "inputs", 0), "in0"));
    CHECK (!strcmp (s_name (spec, "inputs", 1), "in2"));
    CHECK (!strcmp (s_name (spec, "inputs", 2), "norm_weight"));
    CHECK (!strcmp (s_name (spec, "inputs", 3), "in0_2"));     /* the parameter yields */
    CHECK (!strcmp (s_name (spec, "inputs", 4), "b0_running_mean"));
    CHECK (!strcmp (s_name (spec, "outputs", 0), "out0"));
    CHECK (json_array_size (json_object_get (spec, "outputs")) == 1);
    /* set 0's shapes and the manifest's dtypes */
    json_t *in0 = json_array_get (ins, 0);
    CHECK (json_integer_value (json_array_get (json_object_get (in0, "shape"), 0)) == 4);
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (ins, 1), "dtype")), "i64"));
    CHECK (json_array_size (json_object_get (json_array_get (ins, 4), "shape")) == 0);
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (ins, 4), "dtype")), "f64"));
    CHECK (!strcmp (json_string_value (json_object_get (
               json_array_get (json_object_get (spec, "outputs"), 0), "dtype")), "f16"));
    /* numeric init values and set 0's numeric arguments; a string is not one */
    json_t *sc = json_object_get (spec, "scalars");
    CHECK (json_object_size (sc) == 3);
    CHECK (json_number_value (json_object_get (sc, "init0")) == 768);
    CHECK (json_number_value (json_object_get (sc, "in1")) == 0.5);
    CHECK (json_number_value (json_object_get (sc, "in3")) == 1);
    CHECK (json_object_get (sc, "init1") == NULL);
    /* kept from the task; the description says what in[] holds */
    json_t *ref = json_object_get (spec, "reference");
    CHECK (!strcmp (json_string_value (json_object_get (ref, "language")), "pytorch"));
    CHECK (!strcmp (json_string_value (json_object_get (spec, "op")), "pytorch"));
    const char *desc = json_string_value (json_object_get (spec, "description"));
    CHECK (desc && !strncmp (desc, "a problem\n\n", 11));
    CHECK (desc && strstr (desc, "norm_weight = norm.weight") != NULL);
    CHECK (desc && strstr (desc, "init0 = get_init_inputs()[0]") != NULL);
    CHECK (json_object_get (json_object_get (spec, "tolerance"), "rtol") != NULL);
    /* the submitted task is not changed */
    CHECK (json_object_get (task, "inputs") == NULL);
    char *again = NULL;
    CHECK (kf_task_validate (spec, &again) == 0);
    free (again);
    json_decref (spec);

    /* outputs below the absolute tolerance everywhere: the bound the
     * reference job scaled to them replaces the task's (every per-dtype
     * entry above it), and the description says so */
    json_object_set_new (result, "atol_scaled", json_real (2.5e-8));
    spec = kf_reference_derive (task, result, &why);
    CHECK (spec != NULL);
    json_t *atol = json_object_get (json_object_get (spec, "tolerance"), "atol");
    const char *key;
    json_t *v;
    int lowered = 0;
    json_object_foreach (atol, key, v) {
        CHECK (json_number_value (v) <= 2.5e-8);
        lowered++;
    }
    if (!json_is_object (atol))
        CHECK (json_number_value (atol) == 2.5e-8);
    printf ("    scaled atol: %d per-dtype entries at most 2.5e-8\n", lowered);
    desc = json_string_value (json_object_get (spec, "description"));
    CHECK (desc && strstr (desc, "the absolute tolerance is 2.5e-08") != NULL);
    json_decref (spec);
    json_object_del (result, "atol_scaled");

    /* forward returning no tensor: nothing to write, refused */
    json_t *none = json_pack ("{s:[], s:[]}", "tensors", "scalars");
    CHECK (kf_reference_derive (task, none, &why) == NULL);
    CHECK (why && strstr (why, "no tensor") != NULL);
    free (why);
    json_decref (none);
    /* nothing to read: no tensor argument, parameter or buffer */
    json_t *empty = json_pack ("{s:[o], s:[]}", "tensors",
                               s_entry ("output", 0, 0, "out0", "f32", json_pack ("[i]", 2)),
                               "scalars");
    CHECK (kf_reference_derive (task, empty, &why) == NULL);
    CHECK (why && strstr (why, "no input tensor") != NULL);
    free (why);
    json_decref (empty);
    /* more inputs than the kernel harness takes */
    json_t *many = json_array ();
    for (int i = 0; i < 33; i++)
        json_array_append_new (many, s_entry ("param", -1, i, "w", "f32", json_pack ("[i]", 2)));
    json_array_append_new (many, s_entry ("output", 0, 0, "out0", "f32", json_pack ("[i]", 2)));
    json_t *big = json_pack ("{s:o, s:[]}", "tensors", many, "scalars");
    CHECK (kf_reference_derive (task, big, &why) == NULL);
    CHECK (why && strstr (why, "at most 32") != NULL);
    free (why);
    json_decref (big);
    /* a rank the kernel contract does not have */
    json_t *deep = json_pack ("{s:[o, o], s:[]}", "tensors",
                              s_entry ("input", 0, 0, "in0", "f32", json_pack ("[i]", 2)),
                              s_entry ("output", 0, 0, "out0", "f32",
                                       json_pack ("[i,i,i,i,i,i,i,i,i]", 1, 1, 1, 1, 1, 1, 1, 1, 1)),
                              "scalars");
    CHECK (kf_reference_derive (task, deep, &why) == NULL);
    CHECK (why && strstr (why, "rank 9") != NULL);
    free (why);
    json_decref (deep);
    json_decref (task);
    json_decref (result);
}

static char *
s_slurp (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *text = calloc (1, 1 << 16);
    size_t n = text ? fread (text, 1, (1 << 16) - 1, f) : 0;
    (void) n;
    fclose (f);
    return text;
}

/* The real thing: layernorm.py's reference job, then its derived task. */
static void
s_layernorm (void)
{
    kf_torch_ref_config_t cfg = { 0 };
    kf_torch_ref_t *ref = kf_torch_ref_new (&cfg);
    if (!kf_torch_ref_python (ref)) {
        printf ("  layernorm: skipped: no python with torch (tried: %s)\n",
                kf_torch_ref_tried (ref));
        kf_torch_ref_destroy (&ref);
        return;
    }
    char *source = s_slurp ("examples/pytorch/layernorm.py");
    CHECK (source != NULL);
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = "reference" };
    job.payload = json_pack ("{s:s, s:i, s:i, s:b, s:{s:f, s:f, s:i}}", "source",
                             source ? source : "", "seed", 3, "sets", 2, "compile", 0,
                             "timing", "min_time_s", 0.02, "warmup_s", 0.01,
                             "min_samples", 3);
    kf_job_result_t res;
    kf_torch_ref_handle (ref, &job, &res);
    json_decref (job.payload);
    CHECK (res.ok);
    /* No frame: the data stays in the exec worker's store, described by
     * its key, size and XXH3-128 hashes. */
    CHECK (res.frames == NULL);
    CHECK (strlen (json_string_value (json_object_get (res.result, "data_key"))
                   ? json_string_value (json_object_get (res.result, "data_key")) : "") == 64);
    CHECK (strlen (json_string_value (json_object_get (res.result, "data_hash"))
                   ? json_string_value (json_object_get (res.result, "data_hash")) : "") == 32);
    CHECK (json_integer_value (json_object_get (res.result, "data_bytes"))
           == 4 * (768 + 768 + 1 + 2 * 2 * 96 * 768));
    if (res.ok) {
        json_t *task = s_task ("layernorm");
        char *why = NULL;
        json_t *spec = kf_reference_derive (task, res.result, &why);
        CHECK (spec != NULL);
        if (!spec)
            printf ("    derive: %s\n", why ? why : "?");
        free (why);
        /* forward(x), then nn.LayerNorm's weight and bias, then the eps buffer */
        const char *want[] = { "in0", "norm_weight", "norm_bias", "eps" };
        CHECK (json_array_size (json_object_get (spec, "inputs")) == 4);
        for (size_t i = 0; spec && i < 4; i++)
            CHECK (!strcmp (s_name (spec, "inputs", i), want[i]));
        json_t *x = json_array_get (json_object_get (spec, "inputs"), 0);
        CHECK (json_integer_value (json_array_get (json_object_get (x, "shape"), 0)) == 96);
        CHECK (json_integer_value (json_array_get (json_object_get (x, "shape"), 1)) == 768);
        CHECK (!strcmp (s_name (spec, "outputs", 0), "out0"));
        json_t *sc = json_object_get (spec, "scalars");
        CHECK (json_number_value (json_object_get (sc, "init0")) == 768);
        CHECK (json_number_value (json_object_get (sc, "init1")) == 1e-5);
        if (spec) {
            char *text = json_dumps (json_object_get (spec, "inputs"), JSON_COMPACT);
            printf ("  layernorm inputs: %s\n", text);
            free (text);
        }
        json_decref (spec);
        json_decref (task);
    }
    else
        printf ("    reference job: %s\n", res.error ? res.error : "?");
    free (res.error);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    free (source);
    kf_torch_ref_destroy (&ref);
}

int
main (void)
{
    s_rules ();
    s_layernorm ();
    return kf_test_done ("test_reference");
}
