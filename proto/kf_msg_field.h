/*  kf_msg_field.h - the field readers the typed result decoders share
 *  (kf_msg_eval.c, kf_msg_compile.c, kf_msg_generate.c, ...) and their
 *  common frame (kf_field_codec_t): each reader reads one
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

/* What the typed result codecs share: one of these per result struct
 * (kf_msg_eval.c, kf_msg_compile.c, ...) names its size, where its
 * reference to the JSON lies, the decoder of its fields and what else it
 * owns, and kf_field_decode, kf_field_free and kf_field_release serve
 * them all. */
typedef struct {
    size_t size;                   /* sizeof the struct */
    size_t json_at;                /* offsetof its json_t *json */
    /* Reads the fields of JSON, an object, into SELF; -1 with WHY set
     * when one is refused. */
    int (*fields) (json_t *json, void *self, char *why, size_t size);
    /* Frees what SELF owns besides its json; NULL: nothing. */
    void (*drop) (void *self);
} kf_field_codec_t;

/* The one decode of every typed result: zeroes SELF (a CODEC struct),
 * refuses a JSON that is not an object, reads its fields with CODEC's
 * decoder and takes a reference to JSON. Returns 0, or -1 with WHY (SIZE
 * bytes, cleared first) naming the field and SELF holding nothing to
 * free. */
int kf_field_decode (const kf_field_codec_t *codec, json_t *json, void *self, char *why,
                     size_t size);

/* Frees what SELF (a CODEC struct, or NULL) holds and zeroes it. */
void kf_field_free (const kf_field_codec_t *codec, void *self);

/* kf_field_free, then SELF itself (from malloc): for kf_msg_t's typed
 * slot. */
void kf_field_release (const kf_field_codec_t *codec, void *self);

/* Defines, for the typed result TYPE whose fields FIELDS reads and whose
 * other holdings DROP frees (NULL: none), NAME_codec and the three
 * functions every typed result has (kf_msg_eval.h says what each does):
 * NAME_decode, NAME_free and NAME_release. */
#define KF_FIELD_CODEC(name, type, fields, drop)                                          \
    const kf_field_codec_t name##_codec = { sizeof (type), offsetof (type, json), fields,  \
                                            drop };                                        \
    int name##_decode (json_t *json, type *self, char *why, size_t size)                   \
    {                                                                                      \
        return kf_field_decode (&name##_codec, json, self, why, size);                     \
    }                                                                                      \
    void name##_free (type *self)                                                          \
    {                                                                                      \
        kf_field_free (&name##_codec, self);                                               \
    }                                                                                      \
    void name##_release (void *self)                                                       \
    {                                                                                      \
        kf_field_release (&name##_codec, self);                                            \
    }

/* Returns -1 from the calling function when EXPR is negative. */
#define KF_FIELD_TRY(expr)     \
    do {                     \
        if ((expr) < 0)      \
            return -1;       \
    } while (0)

#endif
