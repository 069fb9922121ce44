/*  kf_msg_field.c - the field readers of the typed result decoders
 *  (kf_msg_field.h).
 */
#include "kf_msg_field.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

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

int
kf_field_num (json_t *obj, const char *key, const char *path, double lo, double hi, double dflt,
            double *out, char *why, size_t size)
{
    json_t *v = json_object_get (obj, key);
    *out = dflt;
    if (kf_field_absent (v))
        return 0;
    if (!json_is_number (v))
        return kf_field_bad (why, size, path, "must be a number");
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
    json_t *v = json_object_get (obj, key);
    *out = 0;
    if (kf_field_absent (v))
        return 0;
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return kf_field_bad (why, size, path, "must be an integer >= 0");
    *out = json_integer_value (v);
    return 1;
}

int
kf_field_str (json_t *obj, const char *key, const char *path, const char **out, char *why,
            size_t size)
{
    json_t *v = json_object_get (obj, key);
    *out = "";
    if (kf_field_absent (v))
        return 0;
    if (!json_is_string (v))
        return kf_field_bad (why, size, path, "must be a string");
    *out = json_string_value (v);
    return 1;
}

int
kf_field_bool (json_t *obj, const char *key, const char *path, bool *out, char *why, size_t size)
{
    json_t *v = json_object_get (obj, key);
    *out = false;
    if (kf_field_absent (v))
        return 0;
    if (!json_is_boolean (v))
        return kf_field_bad (why, size, path, "must be a boolean");
    *out = json_is_true (v);
    return 1;
}

void
kf_field_put_str (json_t *out, const char *key, const char *value)
{
    if (value && *value)
        json_object_set_new (out, key, json_string (value));
}
