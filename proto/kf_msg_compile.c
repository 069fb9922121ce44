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
#include "kf_msg_field.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OBJ[KEY], optional [mem, algo, sync] of integers 0..3. */
static int
s_coords (json_t *obj, const char *path, bool *has, int lv[3], char *why, size_t size)
{
    json_t *v = json_object_get (obj, "coords");
    *has = false;
    if (kf_field_absent (v))
        return 0;
    if (!json_is_array (v) || json_array_size (v) != 3)
        return kf_field_bad (why, size, path, "must be [mem, algo, sync]");
    for (size_t k = 0; k < 3; k++) {
        json_t *x = json_array_get (v, k);
        if (!json_is_integer (x) || json_integer_value (x) < 0 || json_integer_value (x) > 3)
            return kf_field_bad (why, size, path, "each level must be an integer 0..3");
        lv[k] = (int) json_integer_value (x);
    }
    *has = true;
    return 0;
}


static int
s_config (json_t *row, size_t i, kf_compile_point_t *c, char *why, size_t size)
{
    char path[64];
    snprintf (path, sizeof path, "configs[%zu]", i);
    if (!json_is_object (row) || !json_is_object (json_object_get (row, "params")))
        return kf_field_bad (why, size, path, "must be an object with a params object");
    c->params = json_object_get (row, "params");
    snprintf (path, sizeof path, "configs[%zu].compiled", i);
    KF_FIELD_TRY (kf_field_bool (row, "compiled", path, &c->compiled, why, size));
    json_t *frame = json_object_get (row, "frame");
    c->frame = -1;
    if (!kf_field_absent (frame)) {
        snprintf (path, sizeof path, "configs[%zu].frame", i);
        if (!json_is_integer (frame) || json_integer_value (frame) < 0)
            return kf_field_bad (why, size, path, "must be an integer >= 0");
        c->frame = json_integer_value (frame);
    }
    snprintf (path, sizeof path, "configs[%zu].artifact_hash", i);
    KF_FIELD_TRY (kf_field_str (row, "artifact_hash", path, &c->artifact_hash, why, size));
    snprintf (path, sizeof path, "configs[%zu].log", i);
    KF_FIELD_TRY (kf_field_str (row, "log", path, &c->log, why, size));
    return 0;
}

static int
s_decode (json_t *json, void *self, char *why, size_t size)
{
    kf_compile_result_t *r = self;
    json_t *compiled = json_object_get (json, "compiled");
    if (!compiled)
        return kf_field_bad (why, size, "compiled", "missing");
    if (!json_is_boolean (compiled))
        return kf_field_bad (why, size, "compiled", "must be a boolean");
    r->compiled = json_is_true (compiled);
    KF_FIELD_TRY (kf_field_str (json, "artifact_hash", "artifact_hash", &r->artifact_hash, why, size));
    KF_FIELD_TRY (kf_field_str (json, "toolchain", "toolchain", &r->toolchain, why, size));
    KF_FIELD_TRY (kf_field_str (json, "log", "log", &r->log, why, size));
    json_t *wall = json_object_get (json, "wall_s");
    if (!kf_field_absent (wall)) {
        if (!json_is_number (wall) || !isfinite (json_number_value (wall))
            || json_number_value (wall) < 0)
            return kf_field_bad (why, size, "wall_s", "must be a number >= 0");
        r->wall_s = json_number_value (wall);
    }
    KF_FIELD_TRY (kf_field_bool (json, "cached", "cached", &r->cached, why, size));
    KF_FIELD_TRY (s_coords (json, "coords", &r->has_coords, r->coords, why, size));
    KF_FIELD_TRY (kf_field_str (json, "coords_why", "coords_why", &r->coords_why, why, size));
    KF_FIELD_TRY (kf_field_str (json, "coords_error", "coords_error", &r->coords_error, why, size));
    json_t *tune = json_object_get (json, "tune");
    if (!kf_field_absent (tune) && !json_is_object (tune))
        return kf_field_bad (why, size, "tune", "must be an object");
    r->tune = json_is_object (tune) ? tune : NULL;
    json_t *table = json_object_get (json, "configs");
    if (kf_field_absent (table))
        return 0;
    if (!json_is_array (table))
        return kf_field_bad (why, size, "configs", "must be an array");
    if (json_array_size (table) > KF_COMPILE_MAX_CONFIGS)
        return kf_field_bad (why, size, "configs", "more than %d rows", KF_COMPILE_MAX_CONFIGS);
    r->n_configs = json_array_size (table);
    r->configs = r->n_configs ? calloc (r->n_configs, sizeof *r->configs) : NULL;
    if (r->n_configs && !r->configs)
        return snprintf (why, size, "out of memory"), -1;
    for (size_t i = 0; i < r->n_configs; i++)
        KF_FIELD_TRY (s_config (json_array_get (table, i), i, &r->configs[i], why, size));
    return 0;
}

static void
s_drop (void *self)
{
    free (((kf_compile_result_t *) self)->configs);
}

KF_FIELD_CODEC (kf_compile_result, kf_compile_result_t, s_decode, s_drop)

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
