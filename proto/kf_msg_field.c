/*  kf_msg_field.c - the field readers of the typed result decoders and
 *  the frame they all share: decode, free and release over a
 *  kf_field_codec_t (kf_msg_field.h).
 */
#include "kf_msg_field.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
kf_field_bad (char *why, size_t size, const char *path, const char *fmt, ...)
{
    char text[160];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    snprintf (why, size, "result.%s: %s", path, text);
    return -1;
}

bool
kf_field_absent (json_t *v)
{
    return !v || json_is_null (v);
}

json_t *
kf_field_object (json_t *obj, const char *key, bool *bad)
{
    json_t *v = json_object_get (obj, key);
    if (kf_field_absent (v))
        return NULL;
    if (!json_is_object (v))
        *bad = true;
    return json_is_object (v) ? v : NULL;
}

/* The one lookup of the readers: OBJ[KEY] in *V. Returns 0 when it is
 * absent or null (*V NULL), 1 when its type is one of TYPES (bits
 * S_TYPE (json_type)), else -1 with WHY saying it must be MUST. */
#define S_TYPE(t) (1u << (t))
static int
s_get (json_t *obj, const char *key, const char *path, unsigned types, const char *must,
       json_t **v, char *why, size_t size)
{
    *v = json_object_get (obj, key);
    if (kf_field_absent (*v))
        return *v = NULL, 0;
    if (!(types & S_TYPE (json_typeof (*v))))
        return kf_field_bad (why, size, path, "must be %s", must);
    return 1;
}

int
kf_field_num (json_t *obj, const char *key, const char *path, double lo, double hi, double dflt,
            double *out, char *why, size_t size)
{
    json_t *v;
    int has = s_get (obj, key, path, S_TYPE (JSON_INTEGER) | S_TYPE (JSON_REAL), "a number", &v,
                     why, size);
    *out = dflt;
    if (has <= 0)
        return has;
    double x = json_number_value (v);
    if (!isfinite (x) || x < lo || x > hi)
        return kf_field_bad (why, size, path, "%g is outside [%g, %g]", x, lo, hi);
    *out = x;
    return 1;
}

int
kf_field_count (json_t *obj, const char *key, const char *path, int64_t *out, char *why,
              size_t size)
{
    json_t *v;
    int has = s_get (obj, key, path, S_TYPE (JSON_INTEGER), "an integer >= 0", &v, why, size);
    *out = has > 0 ? json_integer_value (v) : 0;
    if (*out < 0)
        return *out = 0, kf_field_bad (why, size, path, "must be an integer >= 0");
    return has;
}

int
kf_field_str (json_t *obj, const char *key, const char *path, const char **out, char *why,
            size_t size)
{
    json_t *v;
    int has = s_get (obj, key, path, S_TYPE (JSON_STRING), "a string", &v, why, size);
    *out = has > 0 ? json_string_value (v) : "";
    return has;
}

int
kf_field_bool (json_t *obj, const char *key, const char *path, bool *out, char *why, size_t size)
{
    json_t *v;
    int has = s_get (obj, key, path, S_TYPE (JSON_TRUE) | S_TYPE (JSON_FALSE), "a boolean", &v,
                     why, size);
    *out = has > 0 && json_is_true (v);
    return has;
}

void
kf_field_put_str (json_t *out, const char *key, const char *value)
{
    if (value && *value)
        json_object_set_new (out, key, json_string (value));
}

int
kf_field_decode (const kf_field_codec_t *codec, json_t *json, void *self, char *why,
                 size_t size)
{
    memset (self, 0, codec->size);
    if (size)
        why[0] = 0;
    if (!json_is_object (json))
        return snprintf (why, size, "result: must be an object"), -1;
    if (codec->fields (json, self, why, size)) {
        kf_field_free (codec, self);
        return -1;
    }
    *(json_t **) ((char *) self + codec->json_at) = json_incref (json);
    return 0;
}

void
kf_field_free (const kf_field_codec_t *codec, void *self)
{
    if (!self)
        return;
    json_decref (*(json_t **) ((char *) self + codec->json_at));
    if (codec->drop)
        codec->drop (self);
    memset (self, 0, codec->size);
}

void
kf_field_release (const kf_field_codec_t *codec, void *self)
{
    kf_field_free (codec, self);
    free (self);
}
