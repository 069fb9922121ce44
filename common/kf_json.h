/*  kf_json.h - reading the fields of database rows and payloads, which
 *  arrive as jansson objects: a missing or mistyped field reads as "" or 0,
 *  which is what every caller wants when it has already validated the
 *  object or is reading a row it wrote itself. */
#ifndef KF_JSON_H
#define KF_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* OBJ[KEY] as a string, or "" when it is absent or not a string. */
static inline const char *
kf_jstr (json_t *obj, const char *key)
{
    const char *s = json_string_value (json_object_get (obj, key));
    return s ? s : "";
}

/* OBJ[KEY] as an integer, or 0 when it is absent or not an integer. */
static inline int64_t
kf_jint (json_t *obj, const char *key)
{
    return json_integer_value (json_object_get (obj, key));
}

/* OBJ[KEY] as a number (integer or real), or DFLT when it is absent or
 * not a number. */
static inline double
kf_jnum (json_t *obj, const char *key, double dflt)
{
    json_t *v = json_object_get (obj, key);
    return json_is_number (v) ? json_number_value (v) : dflt;
}

/* OBJ[KEY] as a new reference, or JSON null when it is absent: a member
 * copied into a packed object ("o") that must always carry the key. */
static inline json_t *
kf_jref (json_t *obj, const char *key)
{
    json_t *v = json_object_get (obj, key);
    return v ? json_incref (v) : json_null ();
}

/* Whether OBJ's member KEY is a number. */
static inline bool
kf_jhas_num (json_t *obj, const char *key)
{
    return json_is_number (json_object_get (obj, key));
}

/* Removes the null members of OBJ, or of each object in the array OBJ
 * (database rows: a member absent rather than null reads simply). */
static inline void
kf_json_drop_nulls (json_t *obj)
{
    if (json_is_array (obj)) {
        size_t i;
        json_t *row;
        json_array_foreach (obj, i, row)
            kf_json_drop_nulls (row);
        return;
    }
    const char *key;
    json_t *value;
    void *tmp;
    json_object_foreach_safe (obj, tmp, key, value)
        if (json_is_null (value))
            json_object_del (obj, key);
}

#endif
