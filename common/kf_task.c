/*  kf_task.c - loading, checking and hashing native task files.
 *
 *  A task file is read once, at submission, and turned into the canonical
 *  object every other component receives: sources inlined, defaults filled,
 *  numbers normalised. Doing all of it here means the coordinator, the
 *  generators and the exec workers never have to guess at a missing field,
 *  and two files that mean the same thing hash the same. Every error is one
 *  line naming the file and the field, because the person reading it is
 *  usually fixing a hand-written JSON file.
 *
 *  The format is documented in docs/task-format.md.
 */
#include "kf_str.h"
#include "kf_suggest.h"
#include "kf_task.h"
#include "kf_hash.h"
#include "kf_kernel.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sources bigger than this are almost certainly a wrong path. */
#define KF_TASK_MAX_SOURCE (4 * 1024 * 1024)
/* A source block's path: the file as the user named it, for messages. */
#define KF_TASK_MAX_PATH 1024
/* Refuse shapes no evaluation could allocate, before anyone tries. */
#define KF_TASK_MAX_NUMEL ((int64_t) 1 << 40)

static const char *s_dtype_names[] = { "f32", "f64", "f16", "bf16", "i32", "i64" };
static const size_t s_dtype_sizes[] = { 4, 8, 2, 2, 4, 8 };
static const char *s_languages[] = { "c", "cuda", "opencl", "sycl", "pytorch", NULL };
/* At most this many extra shape cases: each costs two correctness sets. */
#define KF_TASK_MAX_SHAPES 16

/* The absolute bound of the element test when a task names none, per
 * dtype, in kf_dtype_t order (docs/task-format.md says why each). */
static const double s_atol_default[] = { 1e-5, 1e-8, 1e-3, 1e-2, 0, 0 };

int
kf_dtype_from_name (const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < (int) (sizeof s_dtype_names / sizeof s_dtype_names[0]); i++)
        if (strcmp (name, s_dtype_names[i]) == 0)
            return i;
    return -1;
}

const char *
kf_dtype_name (int dtype)
{
    if (dtype < 0 || dtype >= (int) (sizeof s_dtype_names / sizeof s_dtype_names[0]))
        return NULL;
    return s_dtype_names[dtype];
}

size_t
kf_dtype_size (int dtype)
{
    if (dtype < 0 || dtype >= (int) (sizeof s_dtype_sizes / sizeof s_dtype_sizes[0]))
        return 0;
    return s_dtype_sizes[dtype];
}

//  Rejects keys not in ALLOWED (NULL-terminated). A misspelt optional key
//  would otherwise be ignored silently and its default used instead.
static int
s_known_keys (json_t *obj, const char *where, const char *const *allowed, char **err)
{
    const char *key;
    json_t *value;
    json_object_foreach (obj, key, value) {
        bool known = false;
        for (int i = 0; allowed[i] && !known; i++)
            known = strcmp (key, allowed[i]) == 0;
        const char *near = known ? NULL : kf_suggest_list (key, allowed);
        if (!known)
            return kf_fail (err, "%s%s%s: unknown field%s%s%s", where, *where ? "." : "", key,
                            near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    return 0;
}

static bool
s_is_identifier (const char *s)
{
    if (!s || !*s)
        return false;
    for (const char *p = s; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'
                  || (p > s && *p >= '0' && *p <= '9');
        if (!ok)
            return false;
    }
    return true;
}

//  A string field: required, or optional with DFLT filled in.
static int
s_string_field (json_t *obj, const char *key, const char *where, bool required,
                const char *dflt, char **err)
{
    json_t *v = json_object_get (obj, key);
    const char *dot = *where ? "." : "";
    if (!v) {
        if (required)
            return kf_fail (err, "%s%s%s: missing field", where, dot, key);
        json_object_set_new (obj, key, json_string (dflt));
        return 0;
    }
    if (!json_is_string (v))
        return kf_fail (err, "%s%s%s: must be a string", where, dot, key);
    if (required && json_string_length (v) == 0)
        return kf_fail (err, "%s%s%s: must not be empty", where, dot, key);
    return 0;
}

//  A number field, stored back as a real so 3 and 3.0 canonicalise alike.
//  LO/HI bound it; LO_OPEN makes the lower bound exclusive.
static int
s_number_field (json_t *obj, const char *key, const char *where, double dflt,
                double lo, bool lo_open, double hi, char **err)
{
    json_t *v = json_object_get (obj, key);
    double x = dflt;
    if (v) {
        if (!json_is_number (v))
            return kf_fail (err, "%s.%s: must be a number", where, key);
        x = json_number_value (v);
    }
    if (!isfinite (x) || (lo_open ? x <= lo : x < lo) || x > hi) {
        if (isinf (hi))
            return kf_fail (err, "%s.%s: must be %s %g (got %g)", where, key,
                           lo_open ? ">" : ">=", lo, x);
        return kf_fail (err, "%s.%s: must be in %s%g, %g] (got %g)", where, key,
                       lo_open ? "(" : "[", lo, hi, x);
    }
    json_object_set_new (obj, key, json_real (x));
    return 0;
}

static int
s_check_dist (json_t *tensor, const char *where, char **err)
{
    json_t *dist = json_object_get (tensor, "dist");
    char at[96];
    snprintf (at, sizeof at, "%s.dist", where);
    if (!dist) {
        dist = json_pack ("{s:s}", "kind", "normal");
        json_object_set_new (tensor, "dist", dist);
    }
    if (!json_is_object (dist))
        return kf_fail (err, "%s: must be an object", at);
    json_t *kind = json_object_get (dist, "kind");
    if (!kind)
        return kf_fail (err, "%s.kind: missing field", at);
    if (!json_is_string (kind))
        return kf_fail (err, "%s.kind: must be a string", at);
    const char *k = json_string_value (kind);
    if (strcmp (k, "normal") == 0) {
        static const char *keys[] = { "kind", "mean", "std", NULL };
        if (s_known_keys (dist, at, keys, err)
            || s_number_field (dist, "mean", at, 0, -INFINITY, false, INFINITY, err)
            || s_number_field (dist, "std", at, 1, 0, true, INFINITY, err))
            return -1;
    }
    else if (strcmp (k, "uniform") == 0) {
        static const char *keys[] = { "kind", "low", "high", NULL };
        if (s_known_keys (dist, at, keys, err)
            || s_number_field (dist, "low", at, -1, -INFINITY, false, INFINITY, err)
            || s_number_field (dist, "high", at, 1, -INFINITY, false, INFINITY, err))
            return -1;
        double low = json_real_value (json_object_get (dist, "low"));
        double high = json_real_value (json_object_get (dist, "high"));
        if (!(high > low))
            return kf_fail (err, "%s.high: must be greater than low (%g <= %g)", at, high, low);
    }
    else if (strcmp (k, "constant") == 0) {
        static const char *keys[] = { "kind", "value", NULL };
        if (s_known_keys (dist, at, keys, err)
            || s_number_field (dist, "value", at, 0, -INFINITY, false, INFINITY, err))
            return -1;
    }
    else if (strcmp (k, "heavy_tail") == 0) {
        static const char *keys[] = { "kind", "scale", "dof", NULL };
        if (s_known_keys (dist, at, keys, err)
            || s_number_field (dist, "scale", at, 1, 0, true, INFINITY, err)
            || s_number_field (dist, "dof", at, 3, 0, true, INFINITY, err))
            return -1;
    }
    else
        return kf_fail (err, "%s.kind: unknown dist kind '%s' (normal, uniform, constant, heavy_tail)",
                       at, k);
    return 0;
}

static int
s_check_tensor (json_t *t, const char *where, bool is_input, char **err)
{
    static const char *in_keys[] = { "name", "shape", "dtype", "dist", NULL };
    static const char *out_keys[] = { "name", "shape", "dtype", NULL };
    if (!json_is_object (t))
        return kf_fail (err, "%s: must be an object", where);
    if (s_known_keys (t, where, is_input ? in_keys : out_keys, err))
        return -1;
    if (s_string_field (t, "name", where, true, NULL, err))
        return -1;
    if (!s_is_identifier (json_string_value (json_object_get (t, "name"))))
        return kf_fail (err, "%s.name: must be an identifier (letters, digits, _)", where);

    json_t *shape = json_object_get (t, "shape");
    if (!shape)
        return kf_fail (err, "%s.shape: missing field", where);
    if (!json_is_array (shape))
        return kf_fail (err, "%s.shape: must be an array of positive integers", where);
    if (json_array_size (shape) > KF_MAX_RANK)
        return kf_fail (err, "%s.shape: rank %zu exceeds the maximum of %d", where,
                       json_array_size (shape), KF_MAX_RANK);
    int64_t numel = 1;
    size_t i;
    json_t *dim;
    json_array_foreach (shape, i, dim) {
        if (json_is_real (dim))
            return kf_fail (err, "%s.shape[%zu]: must be a positive integer (got %g)", where, i,
                           json_real_value (dim));
        if (!json_is_integer (dim))
            return kf_fail (err, "%s.shape[%zu]: must be a positive integer", where, i);
        json_int_t d = json_integer_value (dim);
        if (d <= 0)
            return kf_fail (err, "%s.shape[%zu]: must be a positive integer (got %" JSON_INTEGER_FORMAT ")",
                           where, i, d);
        if (d > KF_TASK_MAX_NUMEL || numel > KF_TASK_MAX_NUMEL / d)
            return kf_fail (err, "%s.shape: more than 2^40 elements", where);
        numel *= d;
    }

    json_t *dtype = json_object_get (t, "dtype");
    if (!dtype)
        return kf_fail (err, "%s.dtype: missing field", where);
    if (!json_is_string (dtype))
        return kf_fail (err, "%s.dtype: must be a string", where);
    if (kf_dtype_from_name (json_string_value (dtype)) < 0)
        return kf_fail (err, "%s.dtype: unknown dtype '%s'", where, json_string_value (dtype));
    if (is_input && s_check_dist (t, where, err))
        return -1;
    return 0;
}

//  Reads DIR/FILE (FILE as given when absolute) into a new string.
static char *
s_read_source (const char *dir, const char *file, const char *where, char **err)
{
    char *path = NULL;
    if (file[0] == '/' || !dir)
        path = strdup (file);
    else if (asprintf (&path, "%s/%s", dir, file) < 0)
        path = NULL;
    if (!path) {
        kf_fail (err, "%s.file: out of memory", where);
        return NULL;
    }
    FILE *f = fopen (path, "rb");
    free (path);
    if (!f) {
        kf_fail (err, "%s.file: cannot read '%s': %s", where, file, strerror (errno));
        return NULL;
    }
    char *buf = malloc (KF_TASK_MAX_SOURCE + 1);
    size_t n = buf ? fread (buf, 1, KF_TASK_MAX_SOURCE + 1, f) : 0;
    bool failed = buf == NULL || ferror (f);
    fclose (f);
    if (failed) {
        free (buf);
        kf_fail (err, "%s.file: cannot read '%s'", where, file);
        return NULL;
    }
    if (n > KF_TASK_MAX_SOURCE) {
        free (buf);
        kf_fail (err, "%s.file: '%s' is larger than %d bytes", where, file, KF_TASK_MAX_SOURCE);
        return NULL;
    }
    buf[n] = 0;
    if (strlen (buf) != n) {
        free (buf);
        kf_fail (err, "%s.file: '%s' contains a NUL byte", where, file);
        return NULL;
    }
    return buf;
}

//  A source block: {language, file | source}. DIR is the task file's
//  folder, or NULL for a canonical task, where "file" is not allowed.
static int
s_check_source (json_t *task, const char *key, bool required, const char *dir, char **err)
{
    static const char *keys[] = { "language", "file", "source", "path", NULL };
    json_t *src = json_object_get (task, key);
    if (!src) {
        if (required)
            return kf_fail (err, "%s: missing field", key);
        return 0;
    }
    if (!json_is_object (src))
        return kf_fail (err, "%s: must be an object {language, file | source}", key);
    if (s_known_keys (src, key, keys, err))
        return -1;
    json_t *lang = json_object_get (src, "language");
    if (!lang)
        return kf_fail (err, "%s.language: missing field", key);
    if (!json_is_string (lang))
        return kf_fail (err, "%s.language: must be a string", key);
    //  A PyTorch reference (KernelBench format) is run by the exec
    //  worker's reference job, never compiled; it cannot be a kernel.
    bool reference = strcmp (key, "reference") == 0;
    bool supported = false;
    for (int i = 0; s_languages[i] && !supported; i++)
        supported = strcmp (json_string_value (lang), s_languages[i]) == 0
                    && (reference || strcmp (s_languages[i], "pytorch") != 0);
    if (!supported)
        return kf_fail (err, "%s.language: unsupported language '%s' (c, cuda, opencl, sycl%s)",
                       key, json_string_value (lang), reference ? ", pytorch" : "");

    json_t *file = json_object_get (src, "file");
    json_t *text = json_object_get (src, "source");
    if (file && text)
        return kf_fail (err, "%s: give either file or source, not both", key);
    if (!file && !text)
        return kf_fail (err, "%s.source: missing field (give file or source)", key);
    if (file) {
        if (!dir)
            return kf_fail (err, "%s.file: not allowed in a canonical task (inline it as source)",
                           key);
        if (!json_is_string (file) || json_string_length (file) == 0)
            return kf_fail (err, "%s.file: must be a non-empty string", key);
        const char *name = json_string_value (file);
        char *body = s_read_source (dir, name, key, err);
        if (!body)
            return -1;
        //  The file as the user names it, kept for the messages about this
        //  source (a compiler's error, a traceback): the workers build and
        //  run it under names of their own (kf_rename.h).
        char *shown = NULL;
        if (name[0] == '/' || !strcmp (dir, "."))
            shown = strdup (name);
        else if (asprintf (&shown, "%s/%s", dir, name) < 0)
            shown = NULL;
        json_object_del (src, "file");
        json_object_set_new (src, "source", json_string_nocheck (body));
        free (body);
        if (shown && strlen (shown) <= KF_TASK_MAX_PATH)
            json_object_set_new (src, "path", json_string (shown));   /* NULL: not UTF-8, none */
        free (shown);
        text = json_object_get (src, "source");
    }
    json_t *path = json_object_get (src, "path");
    if (path) {
        const char *p = json_string_value (path);
        bool printable = p && *p && strlen (p) <= KF_TASK_MAX_PATH;
        for (; printable && *p; p++)
            printable = (unsigned char) *p >= 0x20 && *p != 0x7f;
        if (!printable)
            return kf_fail (err, "%s.path: must be a file name of 1 to %d printable bytes", key,
                            KF_TASK_MAX_PATH);
    }
    if (!json_is_string (text))
        return kf_fail (err, "%s.source: must be a string", key);
    if (json_string_length (text) == 0)
        return kf_fail (err, "%s.source: must not be empty", key);
    return 0;
}

//  A PyTorch task (reference.language "pytorch") is submitted without
//  tensors: the coordinator derives them from its reference job's
//  manifest (coordinator/kf_reference.c), and that derived task has them.
static bool
s_pytorch_pending (json_t *task, const char *key)
{
    json_t *lang = json_object_get (json_object_get (task, "reference"), "language");
    return !json_object_get (task, key) && json_is_string (lang)
           && strcmp (json_string_value (lang), "pytorch") == 0;
}

static int
s_check_tensors (json_t *task, const char *key, bool is_input, char **err)
{
    json_t *list = json_object_get (task, key);
    if (s_pytorch_pending (task, key))
        return 0;
    if (!list)
        return kf_fail (err, "%s: missing field", key);
    if (!json_is_array (list) || json_array_size (list) == 0)
        return kf_fail (err, "%s: must be a non-empty array", key);
    size_t i;
    json_t *t;
    json_array_foreach (list, i, t) {
        char where[48];
        snprintf (where, sizeof where, "%s[%zu]", key, i);
        if (s_check_tensor (t, where, is_input, err))
            return -1;
    }
    return 0;
}

//  Tensor names must be unique across inputs and outputs: evaluation
//  reports and generators refer to tensors by name.
static int
s_check_unique_names (json_t *task, char **err)
{
    const char *lists[] = { "inputs", "outputs" };
    for (int a = 0; a < 2; a++) {
        json_t *la = json_object_get (task, lists[a]);
        for (size_t i = 0; i < json_array_size (la); i++) {
            const char *na = json_string_value (json_object_get (json_array_get (la, i), "name"));
            for (int b = 0; b <= a; b++) {
                json_t *lb = json_object_get (task, lists[b]);
                size_t end = b == a ? i : json_array_size (lb);
                for (size_t j = 0; j < end; j++) {
                    const char *nb
                        = json_string_value (json_object_get (json_array_get (lb, j), "name"));
                    if (strcmp (na, nb) == 0)
                        return kf_fail (err, "%s[%zu].name: duplicate tensor name '%s'",
                                       lists[a], i, na);
                }
            }
        }
    }
    return 0;
}

static int
s_check_scalars (json_t *task, char **err)
{
    json_t *scalars = json_object_get (task, "scalars");
    if (!scalars) {
        json_object_set_new (task, "scalars", json_object ());
        return 0;
    }
    if (!json_is_object (scalars))
        return kf_fail (err, "scalars: must be an object of name: number");
    const char *key;
    json_t *value;
    json_object_foreach (scalars, key, value) {
        if (!s_is_identifier (key))
            return kf_fail (err, "scalars.%s: name must be an identifier", key);
        if (!json_is_number (value) || !isfinite (json_number_value (value)))
            return kf_fail (err, "scalars.%s: must be a finite number", key);
        //  Replacing an existing key keeps its position, so order survives.
        json_object_set_new (scalars, key, json_real (json_number_value (value)));
    }
    return 0;
}

static int
s_check_attributes (json_t *task, char **err)
{
    json_t *attrs = json_object_get (task, "attributes");
    if (!attrs) {
        json_object_set_new (task, "attributes", json_object ());
        return 0;
    }
    if (!json_is_object (attrs))
        return kf_fail (err, "attributes: must be an object");
    const char *key;
    json_t *value;
    json_object_foreach (attrs, key, value) {
        if (!json_is_string (value) && !json_is_number (value) && !json_is_boolean (value))
            return kf_fail (err, "attributes.%s: must be a string, number or boolean", key);
    }
    return 0;
}

//  "atol": one number for every dtype, or an object of dtype: number with
//  the defaults filled in for the dtypes it leaves out. Absent, it is the
//  whole default object: one fixed bound would be far too loose for f64
//  and far too tight for bf16.
static int
s_check_atol (json_t *tol, char **err)
{
    json_t *atol = json_object_get (tol, "atol");
    if (atol && json_is_number (atol))
        return s_number_field (tol, "atol", "tolerance", 0, 0, false, INFINITY, err);
    if (atol && !json_is_object (atol))
        return kf_fail (err, "tolerance.atol: must be a number or an object of dtype: number");
    if (!atol) {
        atol = json_object ();
        json_object_set_new (tol, "atol", atol);
    }
    const char *key;
    json_t *value;
    json_object_foreach (atol, key, value) {
        if (kf_dtype_from_name (key) < 0)
            return kf_fail (err, "tolerance.atol.%s: unknown dtype", key);
    }
    for (int d = 0; d < (int) (sizeof s_dtype_names / sizeof s_dtype_names[0]); d++)
        if (s_number_field (atol, s_dtype_names[d], "tolerance.atol", s_atol_default[d], 0,
                            false, INFINITY, err))
            return -1;
    return 0;
}

double
kf_task_atol (json_t *task, int dtype)
{
    json_t *atol = json_object_get (json_object_get (task, "tolerance"), "atol");
    if (json_is_number (atol))
        return json_number_value (atol);
    const char *name = kf_dtype_name (dtype);
    json_t *v = name ? json_object_get (atol, name) : NULL;
    if (json_is_number (v))
        return json_number_value (v);
    return dtype >= 0 && dtype < (int) (sizeof s_atol_default / sizeof s_atol_default[0])
           ? s_atol_default[dtype] : 0;
}

static int
s_check_tolerance (json_t *task, char **err)
{
    static const char *keys[] = { "rtol", "atol", "min_match", "min_cosine", NULL };
    json_t *tol = json_object_get (task, "tolerance");
    if (!tol) {
        tol = json_object ();
        json_object_set_new (task, "tolerance", tol);
    }
    if (!json_is_object (tol))
        return kf_fail (err, "tolerance: must be an object");
    if (s_known_keys (tol, "tolerance", keys, err)
        || s_number_field (tol, "rtol", "tolerance", 1e-2, 0, true, 1, err)
        || s_check_atol (tol, err)
        || s_number_field (tol, "min_match", "tolerance", 0.99, 0, true, 1, err)
        || s_number_field (tol, "min_cosine", "tolerance", 0.99985, 0, true, 1, err))
        return -1;
    return 0;
}

//  "shapes": extra shape cases, each an object naming the tensors whose
//  shape differs from the main declaration. Correctness runs on each, so
//  a kernel that hard-codes the main shape is caught; a case may not
//  change a tensor's rank, because kernels are written for one rank.
static int
s_check_shapes (json_t *task, char **err)
{
    json_t *cases = json_object_get (task, "shapes");
    if (!cases)
        return 0;
    if (!json_is_array (cases))
        return kf_fail (err, "shapes: must be an array of {tensor: shape} objects");
    if (json_array_size (cases) > KF_TASK_MAX_SHAPES)
        return kf_fail (err, "shapes: at most %d cases (got %zu)", KF_TASK_MAX_SHAPES,
                        json_array_size (cases));
    size_t c;
    json_t *one;
    json_array_foreach (cases, c, one) {
        if (!json_is_object (one) || json_object_size (one) == 0)
            return kf_fail (err, "shapes[%zu]: must be an object naming at least one tensor", c);
        const char *name;
        json_t *shape;
        json_object_foreach (one, name, shape) {
            json_t *decl = NULL;
            const char *lists[] = { "inputs", "outputs" };
            for (int l = 0; l < 2 && !decl; l++) {
                json_t *list = json_object_get (task, lists[l]);
                for (size_t i = 0; i < json_array_size (list) && !decl; i++) {
                    json_t *t = json_array_get (list, i);
                    if (strcmp (json_string_value (json_object_get (t, "name")), name) == 0)
                        decl = t;
                }
            }
            if (!decl)
                return kf_fail (err, "shapes[%zu].%s: no input or output of that name", c, name);
            if (!json_is_array (shape))
                return kf_fail (err, "shapes[%zu].%s: must be an array of positive integers", c,
                                name);
            size_t rank = json_array_size (json_object_get (decl, "shape"));
            if (json_array_size (shape) != rank)
                return kf_fail (err, "shapes[%zu].%s: rank %zu differs from the declared rank %zu",
                                c, name, json_array_size (shape), rank);
            int64_t numel = 1;
            size_t i;
            json_t *dim;
            json_array_foreach (shape, i, dim) {
                json_int_t d = json_is_integer (dim) ? json_integer_value (dim) : 0;
                if (d <= 0)
                    return kf_fail (err, "shapes[%zu].%s[%zu]: must be a positive integer", c,
                                    name, i);
                if (d > KF_TASK_MAX_NUMEL || numel > KF_TASK_MAX_NUMEL / d)
                    return kf_fail (err, "shapes[%zu].%s: more than 2^40 elements", c, name);
                numel *= d;
            }
        }
    }
    return 0;
}

//  "flops": the floating-point operations of one call on the main shape
//  (a number), or one per shape case with the main shape first (an
//  array), so evaluations can report a FLOP rate against the device's.
static int
s_check_flops (json_t *task, char **err)
{
    json_t *flops = json_object_get (task, "flops");
    if (!flops)
        return 0;
    size_t cases = 1 + json_array_size (json_object_get (task, "shapes"));
    if (json_is_array (flops)) {
        if (json_array_size (flops) != cases)
            return kf_fail (err, "flops: %zu values for %zu shape cases (the main shape first)",
                            json_array_size (flops), cases);
        size_t i;
        json_t *v;
        json_array_foreach (flops, i, v) {
            if (!json_is_number (v) || !(json_number_value (v) >= 0)
                || !isfinite (json_number_value (v)))
                return kf_fail (err, "flops[%zu]: must be a number >= 0", i);
            json_array_set_new (flops, i, json_real (json_number_value (v)));
        }
        return 0;
    }
    if (!json_is_number (flops) || !(json_number_value (flops) >= 0)
        || !isfinite (json_number_value (flops)))
        return kf_fail (err, "flops: must be a number >= 0 or an array of them");
    json_object_set_new (task, "flops", json_real (json_number_value (flops)));
    return 0;
}

//  The vendor libraries a CUDA task may allow (docs/task-format.md): the
//  names the linker knows them by.
//  libraries: the name the linker knows, and how a prompt names it.
static const char *const s_libraries[][2] = {
    { "cublas", "cuBLAS (cublas_v2.h)" },
    { "cublasLt", "cuBLASLt (cublasLt.h)" },
    { "cudnn", "cuDNN (cudnn.h)" },
};

const char *
kf_task_library_label (const char *name)
{
    for (size_t i = 0; name && i < sizeof s_libraries / sizeof s_libraries[0]; i++)
        if (!strcmp (name, s_libraries[i][0]))
            return s_libraries[i][1];
    return NULL;
}

bool
kf_task_library_known (const char *name)
{
    return kf_task_library_label (name) != NULL;
}

//  "libraries": what a CUDA candidate (and reference) may call besides the
//  CUDA runtime, each linked into its shared object; without it nothing
//  else links.
static int
s_check_libraries (json_t *task, char **err)
{
    json_t *libs = json_object_get (task, "libraries");
    if (!libs)
        return 0;
    if (!json_is_array (libs))
        return kf_fail (err, "libraries: must be an array such as [\"cublas\"]");
    size_t i, j;
    json_t *v;
    json_array_foreach (libs, i, v) {
        if (!kf_task_library_known (json_string_value (v)))
            return kf_fail (err, "libraries[%zu]: must be one of cublas, cublasLt, cudnn", i);
        for (j = 0; j < i; j++)
            if (json_equal (v, json_array_get (libs, j)))
                return kf_fail (err, "libraries[%zu]: %s is listed twice", i,
                                json_string_value (v));
    }
    return 0;
}

static int
s_check_task (json_t *task, const char *dir, char **err)
{
    static const char *keys[] = { "name", "op", "description", "attributes", "inputs",
                                  "outputs", "scalars", "reference", "initial",
                                  "tolerance", "instructions", "shapes", "flops", "libraries",
                                  NULL };
    if (!json_is_object (task))
        return kf_fail (err, "task: must be a JSON object");
    if (s_known_keys (task, "", keys, err))
        return -1;
    if (s_string_field (task, "name", "", true, NULL, err)
        || s_string_field (task, "op", "", true, NULL, err))
        return -1;
    if (!s_is_identifier (json_string_value (json_object_get (task, "op"))))
        return kf_fail (err, "op: must be an identifier such as softmax or row_reduction");
    if (s_string_field (task, "description", "", false, "", err)
        || s_string_field (task, "instructions", "", false, "", err)
        || s_check_attributes (task, err)
        || s_check_tensors (task, "inputs", true, err)
        || s_check_tensors (task, "outputs", false, err)
        || s_check_unique_names (task, err)
        || s_check_scalars (task, err)
        || s_check_source (task, "reference", true, dir, err)
        || s_check_source (task, "initial", false, dir, err)
        || s_check_tolerance (task, err)
        || s_check_shapes (task, err)
        || s_check_flops (task, err)
        || s_check_libraries (task, err))
        return -1;
    return 0;
}

int
kf_task_validate (json_t *task, char **err)
{
    if (err)
        *err = NULL;
    return s_check_task (task, NULL, err);
}

json_t *
kf_task_load (const char *path, char **err)
{
    char *inner = NULL;
    if (err)
        *err = NULL;
    if (!path) {
        kf_fail (err, "(null): no task file given");
        return NULL;
    }
    json_error_t jerr;
    json_t *task = json_load_file (path, JSON_REJECT_DUPLICATES, &jerr);
    if (!task) {
        if (jerr.line > 0)
            kf_fail (err, "%s: line %d column %d: %s", path, jerr.line, jerr.column, jerr.text);
        else
            kf_fail (err, "%s: %s", path, jerr.text);
        return NULL;
    }
    char *dir = strdup (path);
    if (!dir) {
        json_decref (task);
        kf_fail (err, "%s: out of memory", path);
        return NULL;
    }
    char *slash = strrchr (dir, '/');
    if (slash)
        *slash = 0;
    else
        strcpy (dir, ".");
    if (slash == dir)
        strcpy (dir, "/");
    int rc = s_check_task (task, dir, &inner);
    free (dir);
    if (rc) {
        kf_fail (err, "%s: %s", path, inner ? inner : "invalid task");
        free (inner);
        json_decref (task);
        return NULL;
    }
    return task;
}

void
kf_task_hash (json_t *task, char out[65])
{
    char *text = json_dumps (task, JSON_SORT_KEYS | JSON_COMPACT);
    if (!text) {
        //  Only on out of memory; hash the empty string rather than leave
        //  OUT undefined.
        kf_sha256_hex ("", 0, out);
        return;
    }
    kf_sha256_hex (text, strlen (text), out);
    free (text);
}
