/*  kf_msg_field.h - the field readers the typed result decoders share
 *  (kf_msg_eval.c, kf_msg_compile.c, kf_msg_generate.c): each reads one
 *  optional field of a JSON object, checks its type and range once, and
 *  on a refusal writes "result.PATH: why" into WHY (SIZE bytes).
 *
 *  Every reader returns 0 when the field is absent or null (*OUT set to
 *  its default), 1 when it is there and was read, -1 when it is refused.
 */
#ifndef KF_MSG_FIELD_H
#define KF_MSG_FIELD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes why the field PATH is refused; returns -1. */
int kf_field_bad (char *why, size_t size, const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* Whether V is absent or JSON null. */
bool kf_field_absent (json_t *v);

/* OBJ[KEY] as an optional object: NULL when absent or null, *BAD set
 * when present and not an object. */
json_t *kf_field_object (json_t *obj, const char *key, bool *bad);

/* A number in [LO, HI], finite (DFLT when absent). */
int kf_field_num (json_t *obj, const char *key, const char *path, double lo, double hi,
                double dflt, double *out, char *why, size_t size);

/* An integer >= 0 (0 when absent). */
int kf_field_count (json_t *obj, const char *key, const char *path, int64_t *out, char *why,
                  size_t size);

/* A string, borrowed from OBJ ("" when absent). */
int kf_field_str (json_t *obj, const char *key, const char *path, const char **out, char *why,
                size_t size);

/* A boolean (false when absent). */
int kf_field_bool (json_t *obj, const char *key, const char *path, bool *out, char *why,
                 size_t size);

/* For the encoders: sets OUT[KEY] to VALUE when VALUE is a non-empty
 * string, else leaves OUT as it is. */
void kf_field_put_str (json_t *out, const char *key, const char *value);

/* Returns -1 from the calling function when EXPR is negative. */
#define KF_FIELD_TRY(expr)     \
    do {                     \
        if ((expr) < 0)      \
            return -1;       \
    } while (0)

#endif
