/*  kf_msg_compile.c - the compile result's one decoder and one encoder
 *  (kf_msg_compile.h), beside the codec of the frames (kf_proto.c).
 *
 *  The decoder follows PROTOCOL.md's compile row: `compiled` is required;
 *  every other field it names may be absent or null, and when present
 *  must have its JSON type and range (coordinates three integers 0..3, a
 *  sweep's rows objects with a params object, frames integers >= 0).
 *  Whether a frame index names a frame that came is the receiver's to
 *  judge: it holds the frames. Fields not named pass untouched.
 */
#include "kf_msg_compile.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
s_bad (char *why, size_t size, const char *path, const char *fmt, ...)
{
    char text[160];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    snprintf (why, size, "result.%s: %s", path, text);
    return -1;
}

static bool
s_absent (json_t *v)
{
    return !v || json_is_null (v);
}

/* OBJ[KEY], an optional string, borrowed ("" when absent or null). */
static int
s_str (json_t *obj, const char *key, const char *path, const char **out, char *why,
       size_t size)
{
    json_t *v = json_object_get (obj, key);
    *out = "";
    if (s_absent (v))
        return 0;
    if (!json_is_string (v))
        return s_bad (why, size, path, "must be a string");
    *out = json_string_value (v);
    return 0;
}

static int
s_bool (json_t *obj, const char *key, const char *path, bool *out, char *why, size_t size)
{
    json_t *v = json_object_get (obj, key);
    *out = false;
    if (s_absent (v))
        return 0;
    if (!json_is_boolean (v))
        return s_bad (why, size, path, "must be a boolean");
    *out = json_is_true (v);
    return 0;
}

/* OBJ[KEY], optional [mem, algo, sync] of integers 0..3. */
static int
s_coords (json_t *obj, const char *path, bool *has, int lv[3], char *why, size_t size)
{
    json_t *v = json_object_get (obj, "coords");
    *has = false;
    if (s_absent (v))
        return 0;
    if (!json_is_array (v) || json_array_size (v) != 3)
        return s_bad (why, size, path, "must be [mem, algo, sync]");
    for (size_t k = 0; k < 3; k++) {
        json_t *x = json_array_get (v, k);
        if (!json_is_integer (x) || json_integer_value (x) < 0 || json_integer_value (x) > 3)
            return s_bad (why, size, path, "each level must be an integer 0..3");
        lv[k] = (int) json_integer_value (x);
    }
    *has = true;
    return 0;
}

#define S_TRY(expr)          \
    do {                     \
        if ((expr) < 0)      \
            return -1;       \
    } while (0)

static int
s_config (json_t *row, size_t i, kf_compile_point_t *c, char *why, size_t size)
{
    char path[64];
    snprintf (path, sizeof path, "configs[%zu]", i);
    if (!json_is_object (row) || !json_is_object (json_object_get (row, "params")))
        return s_bad (why, size, path, "must be an object with a params object");
    c->params = json_object_get (row, "params");
    snprintf (path, sizeof path, "configs[%zu].compiled", i);
    S_TRY (s_bool (row, "compiled", path, &c->compiled, why, size));
    json_t *frame = json_object_get (row, "frame");
    c->frame = -1;
    if (!s_absent (frame)) {
        snprintf (path, sizeof path, "configs[%zu].frame", i);
        if (!json_is_integer (frame) || json_integer_value (frame) < 0)
            return s_bad (why, size, path, "must be an integer >= 0");
        c->frame = json_integer_value (frame);
    }
    snprintf (path, sizeof path, "configs[%zu].artifact_hash", i);
    S_TRY (s_str (row, "artifact_hash", path, &c->artifact_hash, why, size));
    snprintf (path, sizeof path, "configs[%zu].log", i);
    S_TRY (s_str (row, "log", path, &c->log, why, size));
    return 0;
}

static int
s_decode (json_t *json, kf_compile_result_t *r, char *why, size_t size)
{
    if (!json_is_object (json))
        return snprintf (why, size, "result: must be an object"), -1;
    json_t *compiled = json_object_get (json, "compiled");
    if (!compiled)
        return s_bad (why, size, "compiled", "missing");
    if (!json_is_boolean (compiled))
        return s_bad (why, size, "compiled", "must be a boolean");
    r->compiled = json_is_true (compiled);
    S_TRY (s_str (json, "artifact_hash", "artifact_hash", &r->artifact_hash, why, size));
    S_TRY (s_str (json, "toolchain", "toolchain", &r->toolchain, why, size));
    S_TRY (s_str (json, "log", "log", &r->log, why, size));
    json_t *wall = json_object_get (json, "wall_s");
    if (!s_absent (wall)) {
        if (!json_is_number (wall) || !isfinite (json_number_value (wall))
            || json_number_value (wall) < 0)
            return s_bad (why, size, "wall_s", "must be a number >= 0");
        r->wall_s = json_number_value (wall);
    }
    S_TRY (s_bool (json, "cached", "cached", &r->cached, why, size));
    S_TRY (s_coords (json, "coords", &r->has_coords, r->coords, why, size));
    S_TRY (s_str (json, "coords_why", "coords_why", &r->coords_why, why, size));
    S_TRY (s_str (json, "coords_error", "coords_error", &r->coords_error, why, size));
    json_t *tune = json_object_get (json, "tune");
    if (!s_absent (tune) && !json_is_object (tune))
        return s_bad (why, size, "tune", "must be an object");
    r->tune = json_is_object (tune) ? tune : NULL;
    json_t *table = json_object_get (json, "configs");
    if (s_absent (table))
        return 0;
    if (!json_is_array (table))
        return s_bad (why, size, "configs", "must be an array");
    if (json_array_size (table) > KF_COMPILE_MAX_CONFIGS)
        return s_bad (why, size, "configs", "more than %d rows", KF_COMPILE_MAX_CONFIGS);
    r->n_configs = json_array_size (table);
    r->configs = r->n_configs ? calloc (r->n_configs, sizeof *r->configs) : NULL;
    if (r->n_configs && !r->configs)
        return snprintf (why, size, "out of memory"), -1;
    for (size_t i = 0; i < r->n_configs; i++)
        S_TRY (s_config (json_array_get (table, i), i, &r->configs[i], why, size));
    return 0;
}

int
kf_compile_result_decode (json_t *json, kf_compile_result_t *self, char *why, size_t size)
{
    memset (self, 0, sizeof *self);
    if (size)
        why[0] = 0;
    if (s_decode (json, self, why, size)) {
        free (self->configs);
        memset (self, 0, sizeof *self);
        return -1;
    }
    self->json = json_incref (json);
    return 0;
}

json_t *
kf_compile_result_encode (const kf_compile_result_t *self)
{
    json_t *out = json_is_object (self->json) ? json_copy (self->json) : json_object ();
    json_object_set_new (out, "compiled", json_boolean (self->compiled));
    json_object_set_new (out, "artifact_hash",
                         self->artifact_hash && *self->artifact_hash
                             ? json_string (self->artifact_hash) : json_null ());
    json_object_set_new (out, "toolchain", json_string (self->toolchain ? self->toolchain : ""));
    json_object_set_new (out, "log", json_string (self->log ? self->log : ""));
    json_object_set_new (out, "wall_s", json_real (self->wall_s));
    if (self->compiled)
        json_object_set_new (out, "cached", json_boolean (self->cached));
    if (self->has_coords) {
        json_object_set_new (out, "coords", json_pack ("[i,i,i]", self->coords[0],
                                                       self->coords[1], self->coords[2]));
        json_object_set_new (out, "coords_why",
                             json_string (self->coords_why ? self->coords_why : ""));
    }
    if (self->coords_error && *self->coords_error)
        json_object_set_new (out, "coords_error", json_string (self->coords_error));
    return out;
}

void
kf_compile_result_free (kf_compile_result_t *self)
{
    if (!self)
        return;
    json_decref (self->json);
    free (self->configs);
    memset (self, 0, sizeof *self);
}

void
kf_compile_result_release (void *self)
{
    kf_compile_result_free (self);
    free (self);
}
