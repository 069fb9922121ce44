/*  test_task.c - the task format: every example loads into a canonical
 *  object with defaults filled and sources inlined, hashes stably, and each
 *  kind of bad task file gives the one-line error naming file and field.
 *  Run from the repository root (or set KF_ROOT to it).
 */
#include "kf_kernel.h"
#include "kf_task.h"
#include "../kf_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/tasks/"

//  Loads PATH expecting failure with exactly EXPECT (or, when PREFIX,
//  an error that starts with EXPECT).
static void
s_expect_error (const char *path, const char *expect, bool prefix)
{
    char *err = NULL;
    json_t *task = kf_task_load (path, &err);
    CHECK (task == NULL);
    CHECK (err != NULL);
    if (err) {
        bool ok = prefix ? strncmp (err, expect, strlen (expect)) == 0 : strcmp (err, expect) == 0;
        if (!ok)
            fprintf (stderr, "  got:    %s\n  wanted: %s%s\n", err, expect, prefix ? "..." : "");
        CHECK (ok);
        CHECK (strchr (err, '\n') == NULL);
    }
    free (err);
    json_decref (task);
}

static void
s_test_examples (void)
{
    const char *names[] = { "softmax", "rmsnorm", "layernorm", "gelu", "row_sum", "row_max" };
    char hashes[6][65];
    for (int i = 0; i < 6; i++) {
        char path[128];
        snprintf (path, sizeof path, "examples/tasks/%s/task.json", names[i]);
        char *err = NULL;
        json_t *task = kf_task_load (path, &err);
        if (!task)
            fprintf (stderr, "  %s\n", err ? err : "(no error)");
        CHECK (task != NULL);
        CHECK (err == NULL);
        if (!task) {
            free (err);
            continue;
        }
        json_t *ref = json_object_get (task, "reference");
        CHECK (json_object_get (ref, "file") == NULL);
        //  The file's name is kept as the user gave it, for messages.
        char want[160];
        snprintf (want, sizeof want, "examples/tasks/%s/reference.c", names[i]);
        const char *kept = json_string_value (json_object_get (ref, "path"));
        if (!kept || strcmp (kept, want))
            fprintf (stderr, "  reference.path: got %s, wanted %s\n", kept ? kept : "none", want);
        CHECK (kept && !strcmp (kept, want));
        const char *src = json_string_value (json_object_get (ref, "source"));
        CHECK (src && strstr (src, "kf_forward"));
        json_t *tol = json_object_get (task, "tolerance");
        CHECK (json_is_real (json_object_get (tol, "rtol")));
        CHECK (json_is_real (json_object_get (tol, "min_cosine")));
        json_t *in0 = json_array_get (json_object_get (task, "inputs"), 0);
        CHECK (json_is_object (json_object_get (in0, "dist")));
        CHECK (json_is_object (json_object_get (task, "scalars")));
        CHECK (json_is_string (json_object_get (task, "instructions")));

        //  The hash is hex, stable over a reload, and unchanged by
        //  validating the canonical object again.
        kf_task_hash (task, hashes[i]);
        CHECK (strlen (hashes[i]) == 64);
        CHECK (strspn (hashes[i], "0123456789abcdef") == 64);
        json_t *again = kf_task_load (path, NULL);
        char h2[65];
        kf_task_hash (again, h2);
        CHECK (strcmp (hashes[i], h2) == 0);
        CHECK (kf_task_validate (again, &err) == 0);
        CHECK (err == NULL);
        kf_task_hash (again, h2);
        CHECK (strcmp (hashes[i], h2) == 0);
        json_decref (again);
        json_decref (task);
        for (int j = 0; j < i; j++)
            CHECK (strcmp (hashes[i], hashes[j]) != 0);
    }
}

static void
s_test_defaults_and_canonical (void)
{
    char *err = NULL;
    json_t *task = kf_task_load (FIX "good_inline.json", &err);
    CHECK (task != NULL);
    CHECK (err == NULL);
    if (!task) {
        fprintf (stderr, "  %s\n", err);
        free (err);
        return;
    }
    //  Defaults: dist normal(0, 1), tolerance, empty description.
    json_t *dist = json_object_get (json_array_get (json_object_get (task, "inputs"), 0), "dist");
    CHECK (strcmp (json_string_value (json_object_get (dist, "kind")), "normal") == 0);
    CHECK (json_real_value (json_object_get (dist, "mean")) == 0.0);
    CHECK (json_real_value (json_object_get (dist, "std")) == 1.0);
    json_t *tol = json_object_get (task, "tolerance");
    CHECK (json_real_value (json_object_get (tol, "rtol")) == 1e-2);
    //  No atol: the per-dtype defaults, written in.
    json_t *atol = json_object_get (tol, "atol");
    CHECK (json_is_object (atol));
    CHECK (json_real_value (json_object_get (atol, "f32")) == 1e-5);
    CHECK (json_real_value (json_object_get (atol, "f64")) == 1e-8);
    CHECK (json_real_value (json_object_get (atol, "f16")) == 1e-3);
    CHECK (json_real_value (json_object_get (atol, "bf16")) == 1e-2);
    CHECK (json_real_value (json_object_get (atol, "i32")) == 0);
    CHECK (kf_task_atol (task, KF_F64) == 1e-8);
    CHECK (json_real_value (json_object_get (tol, "min_match")) == 0.99);
    CHECK (json_real_value (json_object_get (tol, "min_cosine")) == 0.99985);
    CHECK (strcmp (json_string_value (json_object_get (task, "description")), "") == 0);
    //  Scalars keep their order and become reals.
    json_t *scalars = json_object_get (task, "scalars");
    void *it = json_object_iter (scalars);
    CHECK (it && strcmp (json_object_iter_key (it), "eps") == 0);
    it = json_object_iter_next (scalars, it);
    CHECK (it && strcmp (json_object_iter_key (it), "alpha") == 0);
    CHECK (json_is_real (json_object_get (scalars, "alpha")));
    //  The initial kernel is inlined from the fixture's folder.
    json_t *initial = json_object_get (task, "initial");
    CHECK (json_object_get (initial, "file") == NULL);
    const char *src = json_string_value (json_object_get (initial, "source"));
    CHECK (src && strstr (src, "trivial initial kernel"));

    //  A source's path (kept by the loader) must be printable; a
    //  canonical task may carry one.
    CHECK (json_is_string (json_object_get (initial, "path")));
    json_object_set_new (initial, "path", json_string ("bad\nname.c"));
    CHECK (kf_task_validate (task, &err) == -1);
    CHECK (err && strcmp (err, "initial.path: must be a file name of 1 to 1024 printable "
                               "bytes") == 0);
    free (err);
    json_object_set_new (initial, "path", json_string ("x/initial.c"));
    CHECK (kf_task_validate (task, &err) == 0);

    //  A canonical task may not name files; validate says which field.
    json_object_set_new (initial, "file", json_string ("initial.c"));
    CHECK (kf_task_validate (task, &err) == -1);
    CHECK (err && strcmp (err, "initial: give either file or source, not both") == 0);
    free (err);
    json_object_del (initial, "source");
    CHECK (kf_task_validate (task, &err) == -1);
    CHECK (err && strcmp (err, "initial.file: not allowed in a canonical task "
                               "(inline it as source)") == 0);
    free (err);
    json_decref (task);

    //  Integer and real spellings of one number hash the same.
    json_t *a = json_pack ("{s:s, s:s, s:[{s:s, s:[i], s:s, s:{s:s, s:i}}], "
                           "s:[{s:s, s:[i], s:s}], s:{s:s, s:s}}",
                           "name", "t", "op", "softmax", "inputs", "name", "x", "shape", 4,
                           "dtype", "f32", "dist", "kind", "normal", "std", 3, "outputs",
                           "name", "y", "shape", 4, "dtype", "f32", "reference", "language",
                           "c", "source", "int x;");
    json_t *b = json_deep_copy (a);
    json_t *bd = json_object_get (json_array_get (json_object_get (b, "inputs"), 0), "dist");
    json_object_set_new (bd, "std", json_real (3.0));
    CHECK (kf_task_validate (a, NULL) == 0);
    CHECK (kf_task_validate (b, NULL) == 0);
    char ha[65], hb[65];
    kf_task_hash (a, ha);
    kf_task_hash (b, hb);
    CHECK (strcmp (ha, hb) == 0);
    json_decref (a);
    json_decref (b);
}

static void
s_test_errors (void)
{
    s_expect_error (FIX "syntax.json", FIX "syntax.json: line 3 column ", true);
    s_expect_error (FIX "dtype_f8.json", FIX "dtype_f8.json: inputs[0].dtype: unknown dtype 'f8'",
                    false);
    s_expect_error (FIX "missing_name.json", FIX "missing_name.json: name: missing field", false);
    s_expect_error (FIX "shape_zero.json",
                    FIX "shape_zero.json: outputs[0].shape[1]: must be a positive integer (got 0)",
                    false);
    s_expect_error (FIX "shape_negative.json",
                    FIX "shape_negative.json: inputs[0].shape[1]: must be a positive integer "
                        "(got -8)", false);
    s_expect_error (FIX "shape_float.json",
                    FIX "shape_float.json: inputs[0].shape[0]: must be a positive integer "
                        "(got 2.5)", false);
    s_expect_error (FIX "rank9.json",
                    FIX "rank9.json: inputs[0].shape: rank 9 exceeds the maximum of 8", false);
    s_expect_error (FIX "dist_kind.json",
                    FIX "dist_kind.json: inputs[0].dist.kind: unknown dist kind 'poisson' "
                        "(normal, uniform, constant, heavy_tail)", false);
    s_expect_error (FIX "dist_std.json", FIX "dist_std.json: inputs[0].dist.std: must be > 0 (got -1)",
                    false);
    s_expect_error (FIX "tol_rtol.json", FIX "tol_rtol.json: tolerance.rtol: must be in (0, 1] (got 2)",
                    false);
    /* A misspelt field names the one meant; a word near none gets no guess. */
    s_expect_error (FIX "tol_key.json",
                    FIX "tol_key.json: tolerance.rtool: unknown field; did you mean 'rtol'?", false);
    s_expect_error (FIX "language.json",
                    FIX "language.json: reference.language: unsupported language 'python' "
                        "(c, cuda, opencl, sycl, pytorch)", false);
    s_expect_error (FIX "missing_file.json",
                    FIX "missing_file.json: reference.file: cannot read 'nope.c': "
                        "No such file or directory", false);
    s_expect_error (FIX "no_source.json",
                    FIX "no_source.json: reference.source: missing field (give file or source)",
                    false);
    s_expect_error (FIX "no_inputs.json", FIX "no_inputs.json: inputs: missing field", false);
    s_expect_error (FIX "dup_name.json",
                    FIX "dup_name.json: outputs[0].name: duplicate tensor name 'x'", false);
    s_expect_error (FIX "not_object.json", FIX "not_object.json: task: must be a JSON object", false);
    s_expect_error (FIX "unknown_field.json", FIX "unknown_field.json: colour: unknown field", false);
    s_expect_error (FIX "does_not_exist.json", FIX "does_not_exist.json: unable to open", true);
}

//  Validates TASK (taken) expecting EXPECT (NULL: success).
static void
s_expect_validate (json_t *task, const char *expect)
{
    char *err = NULL;
    int rc = kf_task_validate (task, &err);
    if (expect) {
        CHECK (rc == -1 && err && strcmp (err, expect) == 0);
        if (!err || strcmp (err, expect) != 0)
            fprintf (stderr, "  got:    %s\n  wanted: %s\n", err ? err : "(none)", expect);
    }
    else {
        CHECK (rc == 0 && err == NULL);
        if (err)
            fprintf (stderr, "  unexpected: %s\n", err);
    }
    free (err);
    json_decref (task);
}

static json_t *
s_small_task (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}}",
                      "name", "t", "op", "softmax", "inputs", "name", "x", "shape", 4, 8,
                      "dtype", "f32", "outputs", "name", "y", "shape", 4, 8, "dtype", "f32",
                      "reference", "language", "c", "source", "int x;");
}

//  Shape cases, per-dtype atol, flops and PyTorch references.
static void
s_test_extensions (void)
{
    json_t *t = s_small_task ();
    json_object_set_new (t, "shapes", json_pack ("[{s:[i,i], s:[i,i]}, {s:[i,i]}]", "x", 2, 3,
                                                 "y", 2, 3, "x", 1, 1));
    json_object_set_new (t, "flops", json_pack ("[i, f, i]", 100, 12.0, 1));
    s_expect_validate (t, NULL);
    t = s_small_task ();
    json_object_set_new (t, "shapes", json_pack ("[{s:[i,i]}]", "z", 2, 3));
    s_expect_validate (t, "shapes[0].z: no input or output of that name");
    t = s_small_task ();
    json_object_set_new (t, "shapes", json_pack ("[{s:[i]}]", "x", 6));
    s_expect_validate (t, "shapes[0].x: rank 1 differs from the declared rank 2");
    t = s_small_task ();
    json_object_set_new (t, "shapes", json_pack ("[{s:[i,i]}]", "y", 2, 0));
    s_expect_validate (t, "shapes[0].y[1]: must be a positive integer");
    t = s_small_task ();
    json_object_set_new (t, "shapes", json_pack ("[{}]"));
    s_expect_validate (t, "shapes[0]: must be an object naming at least one tensor");
    t = s_small_task ();
    json_object_set_new (t, "flops", json_pack ("[i, i]", 1, 2));
    s_expect_validate (t, "flops: 2 values for 1 shape cases (the main shape first)");
    t = s_small_task ();
    json_object_set_new (t, "flops", json_string ("many"));
    s_expect_validate (t, "flops: must be a number >= 0 or an array of them");
    //  libraries: known names, once each.
    t = s_small_task ();
    json_object_set_new (t, "libraries", json_pack ("[s, s]", "cublas", "cudnn"));
    s_expect_validate (t, NULL);
    t = s_small_task ();
    json_object_set_new (t, "libraries", json_pack ("[s]", "mkl"));
    s_expect_validate (t, "libraries[0]: must be one of cublas, cublasLt, cudnn");
    t = s_small_task ();
    json_object_set_new (t, "libraries", json_pack ("[s, s]", "cublas", "cublas"));
    s_expect_validate (t, "libraries[1]: cublas is listed twice");
    t = s_small_task ();
    json_object_set_new (t, "libraries", json_string ("cublas"));
    s_expect_validate (t, "libraries: must be an array such as [\"cublas\"]");
    CHECK (kf_task_library_known ("cublasLt") && !kf_task_library_known ("-lfoo")
           && !kf_task_library_known (NULL));

    //  atol: a number for all dtypes, or an object completed by defaults.
    t = s_small_task ();
    json_object_set_new (t, "tolerance", json_pack ("{s:{s:f}}", "atol", "f64", 1e-5));
    CHECK (kf_task_validate (t, NULL) == 0);
    CHECK (kf_task_atol (t, KF_F64) == 1e-5 && kf_task_atol (t, KF_F32) == 1e-5
           && kf_task_atol (t, KF_BF16) == 1e-2 && kf_task_atol (t, KF_I64) == 0);
    json_decref (t);
    t = s_small_task ();
    json_object_set_new (t, "tolerance", json_pack ("{s:i}", "atol", 0));
    CHECK (kf_task_validate (t, NULL) == 0);
    CHECK (kf_task_atol (t, KF_F16) == 0 && json_is_real (json_object_get (json_object_get (t, "tolerance"), "atol")));
    json_decref (t);
    t = s_small_task ();
    json_object_set_new (t, "tolerance", json_pack ("{s:{s:f}}", "atol", "f8", 1.0));
    s_expect_validate (t, "tolerance.atol.f8: unknown dtype");
    t = s_small_task ();
    json_object_set_new (t, "tolerance", json_pack ("{s:{s:f}}", "atol", "f32", -1.0));
    s_expect_validate (t, "tolerance.atol.f32: must be >= 0 (got -1)");

    //  A PyTorch reference is accepted inline; an initial kernel may not
    //  be PyTorch.
    t = s_small_task ();
    json_object_set_new (t, "reference", json_pack ("{s:s, s:s}", "language", "pytorch",
                                                    "source", "class Model: pass"));
    s_expect_validate (t, NULL);
    t = s_small_task ();
    json_object_set_new (t, "initial", json_pack ("{s:s, s:s}", "language", "pytorch",
                                                  "source", "class Model: pass"));
    s_expect_validate (t, "initial.language: unsupported language 'pytorch' (c, cuda, opencl, sycl)");
}

static void
s_test_dtypes (void)
{
    const char *names[] = { "f32", "f64", "f16", "bf16", "i32", "i64" };
    const int ids[] = { KF_F32, KF_F64, KF_F16, KF_BF16, KF_I32, KF_I64 };
    const size_t sizes[] = { 4, 8, 2, 2, 4, 8 };
    for (int i = 0; i < 6; i++) {
        CHECK (kf_dtype_from_name (names[i]) == ids[i]);
        CHECK (strcmp (kf_dtype_name (ids[i]), names[i]) == 0);
        CHECK (kf_dtype_size (ids[i]) == sizes[i]);
    }
    CHECK (kf_dtype_from_name ("f8") == -1);
    CHECK (kf_dtype_from_name (NULL) == -1);
    CHECK (kf_dtype_name (6) == NULL);
    CHECK (kf_dtype_name (-1) == NULL);
    CHECK (kf_dtype_size (99) == 0);
}

int
main (void)
{
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0) {
        fprintf (stderr, "test_task: cannot enter KF_ROOT %s\n", root);
        return 1;
    }
    s_test_dtypes ();
    s_test_examples ();
    s_test_defaults_and_canonical ();
    s_test_errors ();
    s_test_extensions ();
    return kf_test_done ("test_task");
}
