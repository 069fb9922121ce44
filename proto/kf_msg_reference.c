/*  kf_msg_reference.c - the reference result's one decoder and one
 *  encoder (kf_msg_reference.h).
 *
 *  `tensors` is required (a manifest without it describes nothing); each
 *  entry must be an object with a known role, an integer index >= 0, a set
 *  (an integer >= 0, or null for parameters and buffers), a kf dtype, a
 *  shape of at most KF_REFERENCE_MAX_RANK integers >= 0 whose product
 *  fits in 62 bits, and, when exported, an offset and a byte count that
 *  agree with its dtype and shape and lie inside `data_bytes`. Scalars
 *  likewise (role, set, index; their value is any JSON). The data's
 *  description (data_key, data_hash, inputs_hash) must be hex of its
 *  length; timings' medians finite and >= 0; findings strings. Bounds
 *  are checked here so nothing past the edge multiplies or adds an
 *  unchecked number. Fields not named pass untouched.
 */
#include "kf_msg_reference.h"
#include "kf_msg_field.h"
#include "kf_task.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest element count or byte offset accepted: products and sums
 * of two of them stay inside int64_t. */
#define S_MAX_COUNT ((int64_t) 1 << 62)

static bool
s_hex (const char *s, size_t len)
{
    return strlen (s) == len && strspn (s, "0123456789abcdef") == len;
}

/* OBJ's "set": an integer >= 0, or null or absent (then *OUT = -1). */
static int
s_set (json_t *obj, const char *path, int64_t *out, char *why, size_t size)
{
    json_t *v = json_object_get (obj, "set");
    *out = -1;
    if (kf_field_absent (v))
        return 0;
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return kf_field_bad (why, size, path, "must be an integer >= 0 or null");
    *out = json_integer_value (v);
    return 1;
}

static int
s_role (json_t *e, const char *path, const char *const *roles, const char **out, char *why,
        size_t size)
{
    KF_FIELD_TRY (kf_field_str (e, "role", path, out, why, size));
    for (const char *const *r = roles; *r; r++)
        if (!strcmp (*out, *r))
            return 0;
    return kf_field_bad (why, size, path, "'%.40s' is no role of the manifest", *out);
}

static int
s_shape (json_t *e, const char *path, kf_reference_tensor_t *t, char *why, size_t size)
{
    json_t *shape = json_object_get (e, "shape");
    if (!json_is_array (shape))
        return kf_field_bad (why, size, path, "must be an array of integers >= 0");
    if (json_array_size (shape) > KF_REFERENCE_MAX_RANK)
        return kf_field_bad (why, size, path, "%zu dimensions, more than %d",
                             json_array_size (shape), KF_REFERENCE_MAX_RANK);
    t->rank = (int) json_array_size (shape);
    t->numel = 1;
    for (int k = 0; k < t->rank; k++) {
        json_t *d = json_array_get (shape, (size_t) k);
        if (!json_is_integer (d) || json_integer_value (d) < 0)
            return kf_field_bad (why, size, path, "must be an array of integers >= 0");
        t->shape[k] = json_integer_value (d);
        if (t->shape[k] > 0 && t->numel > S_MAX_COUNT / t->shape[k])
            return kf_field_bad (why, size, path, "more than 2^62 elements");
        t->numel *= t->shape[k];
    }
    return 0;
}

/* What a tensor and a scalar entry share: it is an object with a ROLE
 * among ROLES, a set, an index and a name. LIST ("tensors", "scalars")
 * and I name it; PATH gets "LIST[I]". */
static int
s_entry (json_t *e, const char *list, size_t i, const char *const *roles, const char **role,
         int64_t *set, int64_t *index, const char **name, char *path, size_t psize,
         char *why, size_t size)
{
    char field[96];
    snprintf (path, psize, "%s[%zu]", list, i);
    if (!json_is_object (e))
        return kf_field_bad (why, size, path, "must be an object");
    snprintf (field, sizeof field, "%s.role", path);
    KF_FIELD_TRY (s_role (e, field, roles, role, why, size));
    snprintf (field, sizeof field, "%s.set", path);
    KF_FIELD_TRY (s_set (e, field, set, why, size));
    snprintf (field, sizeof field, "%s.index", path);
    KF_FIELD_TRY (kf_field_count (e, "index", field, index, why, size));
    snprintf (field, sizeof field, "%s.name", path);
    KF_FIELD_TRY (kf_field_str (e, "name", field, name, why, size));
    if (strlen (*name) > 1024)
        return kf_field_bad (why, size, field, "more than 1024 bytes");
    return 0;
}

static int
s_tensor (json_t *e, size_t i, kf_reference_tensor_t *t, char *why, size_t size)
{
    static const char *const roles[] = { "input", "output", "param", "buffer", NULL };
    char path[64], field[96];
    KF_FIELD_TRY (s_entry (e, "tensors", i, roles, &t->role, &t->set, &t->index, &t->name,
                           path, sizeof path, why, size));
    snprintf (field, sizeof field, "%s.dtype", path);
    KF_FIELD_TRY (kf_field_str (e, "dtype", field, &t->dtype, why, size));
    t->dtype_id = kf_dtype_from_name (t->dtype);
    if (t->dtype_id < 0)
        return kf_field_bad (why, size, field, "'%.20s' is no kf dtype", t->dtype);
    snprintf (field, sizeof field, "%s.shape", path);
    KF_FIELD_TRY (s_shape (e, field, t, why, size));
    snprintf (field, sizeof field, "%s.offset", path);
    int has_offset = kf_field_count (e, "offset", field, &t->offset, why, size);
    KF_FIELD_TRY (has_offset);
    if (t->offset > S_MAX_COUNT)
        return kf_field_bad (why, size, field, "past 2^62");
    snprintf (field, sizeof field, "%s.bytes", path);
    int has_bytes = kf_field_count (e, "bytes", field, &t->bytes, why, size);
    KF_FIELD_TRY (has_bytes);
    if (has_offset != has_bytes)
        return kf_field_bad (why, size, path, "offset and bytes go together");
    t->placed = has_offset > 0;
    if (t->placed && (t->numel > S_MAX_COUNT / 8
                      || (int64_t) kf_dtype_size (t->dtype_id) * t->numel != t->bytes))
        return kf_field_bad (why, size, field, "%lld bytes, not what %lld elements of %s take",
                             (long long) t->bytes, (long long) t->numel, t->dtype);
    return 0;
}

static int
s_scalar (json_t *e, size_t i, kf_reference_scalar_t *s, char *why, size_t size)
{
    static const char *const roles[] = { "init", "input", "output", NULL };
    char path[64];
    KF_FIELD_TRY (s_entry (e, "scalars", i, roles, &s->role, &s->set, &s->index, &s->name,
                           path, sizeof path, why, size));
    s->value = json_object_get (e, "value");
    return 0;
}

/* An array field of at most KF_REFERENCE_MAX_ENTRIES entries: NULL when
 * absent (and not REQUIRED). */
static int
s_list (json_t *json, const char *key, bool required, json_t **out, char *why, size_t size)
{
    json_t *v = json_object_get (json, key);
    *out = NULL;
    if (kf_field_absent (v) && !required)
        return 0;
    if (!json_is_array (v))
        return kf_field_bad (why, size, key, "must be an array");
    if (json_array_size (v) > KF_REFERENCE_MAX_ENTRIES)
        return kf_field_bad (why, size, key, "%zu entries, more than %d", json_array_size (v),
                             KF_REFERENCE_MAX_ENTRIES);
    *out = v;
    return 0;
}

static int
s_timing (json_t *timing, const char *key, kf_reference_timing_t *t, char *why, size_t size)
{
    char path[64];
    snprintf (path, sizeof path, "timing.%s", key);
    bool bad = false;
    json_t *o = kf_field_object (timing, key, &bad);
    if (bad)
        return kf_field_bad (why, size, path, "must be an object");
    t->matches_eager = true;
    if (!o)
        return 0;
    t->present = true;
    char field[96];
    snprintf (field, sizeof field, "%s.median_ns", path);
    int has = kf_field_num (o, "median_ns", field, 0, 1e18, 0, &t->median_ns, why, size);
    KF_FIELD_TRY (has);
    t->has_median = has > 0;
    snprintf (field, sizeof field, "%s.matches_eager", path);
    bool same = true;
    has = kf_field_bool (o, "matches_eager", field, &same, why, size);
    KF_FIELD_TRY (has);
    t->matches_eager = has == 0 || same;
    t->failed = !kf_field_absent (json_object_get (o, "error"));
    return 0;
}

static int
s_findings (json_t *json, kf_reference_result_t *r, char *why, size_t size)
{
    json_t *v = json_object_get (json, "degenerate");
    if (kf_field_absent (v))
        return 0;
    if (!json_is_array (v) || json_array_size (v) > KF_REFERENCE_MAX_FINDINGS)
        return kf_field_bad (why, size, "degenerate", "must be an array of at most %d strings",
                             KF_REFERENCE_MAX_FINDINGS);
    size_t i;
    json_t *f;
    json_array_foreach (v, i, f)
        if (!json_is_string (f) || strlen (json_string_value (f)) > KF_REFERENCE_MAX_FINDING)
            return kf_field_bad (why, size, "degenerate", "entry %zu must be a string of at"
                                 " most %d bytes", i, KF_REFERENCE_MAX_FINDING);
    r->degenerate = v;
    return 0;
}

/* The data's description: each field checked when there; has_data when
 * all are, and then every exported tensor lies inside the data. */
static int
s_data (json_t *json, kf_reference_result_t *r, char *why, size_t size)
{
    int n = 0, has;
    KF_FIELD_TRY (has = kf_field_str (json, "data_key", "data_key", &r->data_key, why, size));
    if (has > 0 && !s_hex (r->data_key, 64))
        return kf_field_bad (why, size, "data_key", "must be 64 lower-case hex digits");
    n += has > 0;
    KF_FIELD_TRY (has = kf_field_str (json, "data_hash", "data_hash", &r->data_hash, why, size));
    if (has > 0 && !s_hex (r->data_hash, 32))
        return kf_field_bad (why, size, "data_hash", "must be 32 lower-case hex digits");
    n += has > 0;
    KF_FIELD_TRY (has = kf_field_str (json, "inputs_hash", "inputs_hash", &r->inputs_hash, why,
                                      size));
    if (has > 0 && !s_hex (r->inputs_hash, 32))
        return kf_field_bad (why, size, "inputs_hash", "must be 32 lower-case hex digits");
    n += has > 0;
    KF_FIELD_TRY (has = kf_field_count (json, "data_bytes", "data_bytes", &r->data_bytes, why,
                                        size));
    if (r->data_bytes > S_MAX_COUNT)
        return kf_field_bad (why, size, "data_bytes", "past 2^62");
    n += has > 0;
    json_t *seed = json_object_get (json, "seed");
    if (!kf_field_absent (seed) && !json_is_integer (seed))
        return kf_field_bad (why, size, "seed", "must be an integer");
    r->has_seed = json_is_integer (seed);
    r->seed = r->has_seed ? json_integer_value (seed) : 0;
    r->has_data = n == 4 && r->has_seed;
    for (size_t i = 0; r->has_data && i < r->n_tensors; i++) {
        const kf_reference_tensor_t *t = &r->tensors[i];
        char path[64];
        snprintf (path, sizeof path, "tensors[%zu]", i);
        if (!t->placed)
            return kf_field_bad (why, size, path, "has no offset and bytes in the data");
        if (t->offset > r->data_bytes || t->bytes > r->data_bytes - t->offset) {
            return kf_field_bad (why, size, path, "%lld bytes at %lld do not lie in the data"
                                 " (%lld bytes)", (long long) t->bytes, (long long) t->offset,
                                 (long long) r->data_bytes);
        }
    }
    return 0;
}

static int
s_entries (kf_reference_result_t *r, char *why, size_t size)
{
    r->n_tensors = json_array_size (r->tensor_list);
    r->tensors = calloc (r->n_tensors + 1, sizeof *r->tensors);
    r->n_scalars = json_array_size (r->scalar_list);
    r->scalars = calloc (r->n_scalars + 1, sizeof *r->scalars);
    if (!r->tensors || !r->scalars)
        return snprintf (why, size, "result: out of memory"), -1;
    for (size_t i = 0; i < r->n_tensors; i++)
        KF_FIELD_TRY (s_tensor (json_array_get (r->tensor_list, i), i, &r->tensors[i], why,
                                size));
    for (size_t i = 0; i < r->n_scalars; i++)
        KF_FIELD_TRY (s_scalar (json_array_get (r->scalar_list, i), i, &r->scalars[i], why,
                                size));
    return 0;
}

static int
s_decode (json_t *json, void *self, char *why, size_t size)
{
    kf_reference_result_t *r = self;
    KF_FIELD_TRY (s_list (json, "tensors", true, &r->tensor_list, why, size));
    KF_FIELD_TRY (s_list (json, "scalars", false, &r->scalar_list, why, size));
    KF_FIELD_TRY (s_entries (r, why, size));
    KF_FIELD_TRY (kf_field_count (json, "sets", "sets", &r->sets, why, size));
    KF_FIELD_TRY (s_findings (json, r, why, size));
    int has = kf_field_num (json, "atol_scaled", "atol_scaled", 0, 1e30, 0, &r->atol_scaled,
                            why, size);
    KF_FIELD_TRY (has);
    r->has_atol_scaled = has > 0 && r->atol_scaled > 0;
    bool bad = false;
    json_t *timing = kf_field_object (json, "timing", &bad);
    if (bad)
        return kf_field_bad (why, size, "timing", "must be an object");
    KF_FIELD_TRY (s_timing (timing, "eager", &r->eager, why, size));
    KF_FIELD_TRY (s_timing (timing, "compiled", &r->compiled, why, size));
    KF_FIELD_TRY (s_data (json, r, why, size));
    KF_FIELD_TRY (kf_field_str (json, "torch_version", "torch_version", &r->torch_version, why,
                                size));
    KF_FIELD_TRY (kf_field_str (json, "task_hash", "task_hash", &r->task_hash, why, size));
    KF_FIELD_TRY (kf_field_str (json, "cache_key", "cache_key", &r->cache_key, why, size));
    KF_FIELD_TRY (kf_field_bool (json, "cached", "cached", &r->cached, why, size));
    has = kf_field_num (json, "wall_s", "wall_s", 0, 1e9, 0, &r->wall_s, why, size);
    KF_FIELD_TRY (has);
    r->has_wall = has > 0;
    return 0;
}

static void
s_drop (void *self)
{
    kf_reference_result_t *r = self;
    free (r->tensors);
    free (r->scalars);
}

KF_FIELD_CODEC (kf_reference_result, kf_reference_result_t, s_decode, s_drop)

json_t *
kf_reference_result_encode (const kf_reference_result_t *self)
{
    json_t *out = self->json ? json_deep_copy (self->json) : json_object ();
    if (!json_object_get (out, "tensors"))
        json_object_set_new (out, "tensors", json_array ());
    kf_field_put_str (out, "data_key", self->data_key);
    kf_field_put_str (out, "data_hash", self->data_hash);
    kf_field_put_str (out, "inputs_hash", self->inputs_hash);
    json_object_set_new (out, "data_bytes", json_integer ((json_int_t) self->data_bytes));
    if (self->has_seed)
        json_object_set_new (out, "seed", json_integer ((json_int_t) self->seed));
    kf_field_put_str (out, "torch_version", self->torch_version);
    kf_field_put_str (out, "task_hash", self->task_hash);
    kf_field_put_str (out, "cache_key", self->cache_key);
    json_object_set_new (out, "cached", json_boolean (self->cached));
    if (self->has_wall)
        json_object_set_new (out, "wall_s", json_real (self->wall_s));
    return out;
}

int
kf_reference_result_seal (json_t **result, bool cached, const char *cache_key, double wall_s,
                          char *why, size_t size)
{
    kf_reference_result_t typed;
    int rc = kf_reference_result_decode (*result, &typed, why, size);
    json_decref (*result);
    *result = NULL;
    if (rc)
        return -1;
    typed.cached = cached;
    typed.cache_key = cache_key;
    typed.has_wall = true;
    typed.wall_s = wall_s;
    *result = kf_reference_result_encode (&typed);
    kf_reference_result_free (&typed);
    return 0;
}
